"""Trial (session 17): the v7 record's SFT with one more line in the compact bazaar prompt of the last decision,
"Last round: if the seller refuses this offer, there is no deal." The v7 SFT model times out on 4 of 48 held-out
seeds because it offers a low rung in the last round instead of the expert's ~98 % jump; the prompt only says
"Round 7 of 8 (1 left)", which it does not tell apart from "(2 left)" well. This script adds the line (by replacing
`agents.PROMPT_HINTS["bazaar"]` in this process only) and then runs the CLI or the comparison:

    python training/runs/cpu-smollm2/trials-s17/last_round_line.py sft OUT [THREADS]             # SFT, the v7 recipe
    python training/runs/cpu-smollm2/trials-s17/last_round_line.py eval ADAPTER OUTDIR LABEL [THREADS]
"""
import runpy, sys
from pathlib import Path
import bazaarbatna.agents as agents
from bazaarbatna.core import rounds_left

LAST = "Last round: if the seller refuses this offer, there is no deal."

def ladder_and_deadline(obs: dict) -> str:
    "The ladder line, and in the episode's last round the deadline line."
    line = agents.ladder_line(obs)
    return f"{line}\n{LAST}" if line and rounds_left(obs) <= 1 else line

agents.PROMPT_HINTS["bazaar"] = ladder_and_deadline
here = Path(__file__).resolve().parent
what, args = sys.argv[1], sys.argv[2:]
if what == "sft":
    from bazaarbatna.cli import main
    out, threads = args[0], args[1] if len(args) > 1 else "2"
    sys.exit(main(["train", "sft", "--profile", "cpu", "--recipe", str(here.parents[2] / "configs" / "cpu_record.toml"),
                   "--arena", "bazaar", "--out", out, "--threads", threads]))
if what == "eval":
    sys.argv = [str(here.parent / "trials-s15" / "compare_adapter.py")] + args
    runpy.run_path(sys.argv[0], run_name="__main__")
else: sys.exit(f"unknown command {what!r}: sft or eval")
