"SFT (the quickstart recipe) and its greedy replies on 5 validation seeds, with the compact reply format's example rung removed."
import sys, json, torch
torch.set_num_threads(1)
from bazaarbatna.bazaar import prompts
prompts.PROMPTING["compact_reply"] = prompts.RUNG_REPLY.replace("<a label of the offer ladder, like 58%>", "<a label from the Offer ladder line>")
print(prompts.PROMPTING["compact_reply"], flush=True)
out = sys.argv[1]
from bazaarbatna.train.pipeline import run_pipeline
run_pipeline("sft", profile="cpu", arena="bazaar", out_dir=out, recipe="cpu", threads=1)
sys.argv = ["x", out + "/sft/final", "5", "1"]
exec(open("/work/tools_local/qs_replies.py").read())
