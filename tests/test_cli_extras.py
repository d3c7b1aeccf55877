"""A command whose optional extra is not installed says so in one line, naming the extra, and exits 2: no traceback.

Each case runs the real `bazaarbatna.cli.main` in a fresh interpreter whose import system refuses the extra's first
module (a meta-path finder that raises ModuleNotFoundError, as a missing package does): what is tested is our error
path, on the very import that fails in an environment without the extra."""
import subprocess, sys
import pytest

BLOCKER = '''
import sys
class Missing:
    "Behave as if these top-level packages were not installed."
    def __init__(self, names): self.names = set(names)
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names: raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing(sys.argv[1].split(",")))
from bazaarbatna.cli import main
sys.exit(main(sys.argv[2:]))
'''

CASES = [  # (modules that are missing, the command line, the extra it must name)
    ("fastapi", ["serve"], "server"),
    ("openenv", ["serve"], "server"),
    ("torch,transformers,trl", ["train", "sft", "--profile", "cpu", "--out", "{tmp}"], "train"),
    ("torch,transformers", ["demo"], "train"),
    ("ipywidgets", ["ui", "--no-browser"], "ui"),
    ("voila", ["ui", "--no-browser"], "ui"),
]

@pytest.mark.parametrize("missing,argv,extra", CASES, ids=[f"{c[1][0]}-without-{c[0].split(',')[0]}" for c in CASES])
def test_a_missing_extra_is_one_line_naming_it(missing, argv, extra, tmp_path):
    argv = [a.format(tmp=tmp_path / "run") for a in argv]
    r = subprocess.run([sys.executable, "-c", BLOCKER, missing, *argv], capture_output=True, text=True, timeout=120)
    err = r.stderr.strip()
    assert r.returncode == 2, (r.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    err = err.splitlines()[-1]                     # the error is one line (a command may have said what it was starting)
    assert err.startswith(f"bazaarbatna {argv[0]}: missing module ") and f'".[{extra}]"' in err and f"the {extra} extra" in err, err
