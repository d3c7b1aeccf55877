"""BazaarBATNA: train LLMs to negotiate in a bazaar and a GPU market.

Where things are (each module is a chapter of the docs, https://bazaarbatna.github.io/bazaarbatna):

- `bazaarbatna.arenas`: both arenas by name: `make_env`, `make_policy`, `list_tasks`, `list_policies`;
- `bazaarbatna.bazaar`, `bazaarbatna.market`: each arena's env, tasks, opponents and scripted policies;
- `bazaarbatna.evaluate`: tournaments (`run_eval`, `run_episodes`), bootstrap CIs and tables;
- `bazaarbatna.agents`: the LLM policy (`LLMPolicy`) and its prompts;
- `bazaarbatna.train`: SFT (`train.sft`), whole-episode GRPO (`train.grpo`), profiles and checkpoints;
- `bazaarbatna.tools`: both arenas as TRL `environment_factory` environments;
- `bazaarbatna.server`: the OpenEnv server; `bazaarbatna.ui`: the notebook widgets; `bazaarbatna.cli`: the command line;
- `bazaarbatna.engine`: which modules run compiled (Cython) and why.
"""
__version__ = "0.1.0"

from .engine import install as _install_engine
_install_engine()   # before any submodule: the compiled engine modules load only while built from their current source
