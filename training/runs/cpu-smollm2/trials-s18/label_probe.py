"""Probe (session 18): is the bazaar SFT model's weak last-round offer its own choice, or an artifact of greedy
decoding? Greedy commits to a rung label one token at a time ("8", then "0"), so probability spread over the labels that
share a first digit could outvote the one label the model prefers as a whole. This replays seeds with the model
(greedy, as evaluated) and prints, for every decision, the greedy rung and the three ladder labels with the highest
whole-label log-probability: log p(label, then the '",' that follows it in a reply), after the reply's prefix
'{"action": "offer", "rung": "'. One full forward pass per label, no cache: slow, but nothing to get wrong.

    python training/runs/cpu-smollm2/trials-s18/label_probe.py ADAPTER SEED [SEED ...] > label_probe.txt
"""
import sys
import torch
from bazaarbatna.agents import LLMPolicy, build_messages, load_policy_model, price_ladder
from bazaarbatna.arenas import make_env

torch.set_num_threads(2)
adapter, seeds = sys.argv[1], [int(s) for s in sys.argv[2:]]
model, tok = load_policy_model(adapter)
policy = LLMPolicy("bazaar", model=adapter, compact=True)

def whole_label_logprob(context: str, label: str, close: str = '",') -> float:
    "log p(label + close | context), summed over the label's tokens (the context must tokenize as a prefix)."
    base = tok(context, add_special_tokens=False)["input_ids"]
    ids = tok(context + label + close, add_special_tokens=False)["input_ids"]
    assert ids[:len(base)] == base, "the label merges with the context's last token"
    with torch.no_grad(): lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
    return sum(float(lp[j - 1, ids[j]]) for j in range(len(base), len(ids)))

for seed in seeds:
    env = make_env("bazaar", "single_deal", seed=seed); obs = env.reset(seed=seed); policy.reset(seed)
    while True:
        prompt = tok.apply_chat_template(build_messages("bazaar", obs, compact=True), tokenize=False, add_generation_prompt=True)
        context = prompt + '{"action": "offer", "rung": "'
        scored = sorted(((whole_label_logprob(context, n), n) for n, _ in price_ladder(obs)), reverse=True)[:3]
        action = policy.act(obs)
        greedy = policy.last_replies[0]
        rung = greedy.split('"rung": "')[1].split('"')[0] if '"rung": "' in greedy else greedy[:30]
        print(f"seed {seed} round {obs['round'] + 1}/{obs['max_rounds']}: greedy {rung:>6} | whole-label top "
              + ", ".join(f"{n} {s:+.2f}" for s, n in scored), flush=True)
        r = env.step(action); obs = r.observation
        if r.done: print(f"seed {seed}: {r.info.get('episode', {}).get('reason')}", flush=True); break
