"""B44: the compact bazaar prompt with the rounds left in the ladder line, next to the reply ("Offer ladder (last round): ..."),
as a patch of the arena's prompt hint; then the bazaarbatna CLI with the given arguments."""
import sys
from bazaarbatna.bazaar import prompts
from bazaarbatna.bazaar.prompts import ladder_line

def timed_ladder_line(obs: dict) -> str:
    line, left = ladder_line(obs), obs.get("rounds_left")
    if not line or not isinstance(left, int): return line
    return line.replace("Offer ladder:", "Offer ladder (last round):" if left == 1 else f"Offer ladder ({left} rounds left):", 1)

prompts.PROMPTING["hint"] = timed_ladder_line
if __name__ == "__main__":
    from bazaarbatna.cli import main
    sys.exit(main(sys.argv[1:]))
