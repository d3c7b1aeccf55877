"Fast batched generation: per-row JSON stop, shared-prefix/unpadded prefill, length sorting keeps the conversations' order."
import pytest, torch
from bazaarbatna.models import chat_generate, json_stop, _json_done, GEN_STATS, reset_gen_stats
from bazaarbatna.core import extract_json
from bazaarbatna.train.checkpoints import tiny_model_and_tokenizer

SYSTEM = {"role": "system", "content": "You are a buyer in a bazaar. Reply with one JSON object."}
def convs(n=7):  # a shared system prompt, user messages of different lengths
    return [[SYSTEM, {"role": "user", "content": "The seller asks 60 for a brass lamp. " * (1 + (k * 5) % 7) + f"Round {k}."}]
            for k in range(n)]

@pytest.mark.parametrize("text,done", [
    ('{"action": "walk"}', True), ('  {"action": "offer", "price": 40, "message": "a } in {text"}\n\n{"action"', True),
    ('{"a": {"b": 1}}', True), ('{"action": "offer", "price": 4', False), ('{"a": {"b": 1}', False),
    ('Sure: {"a": 1}', False), ('{"a" 1}', False), ('[1, 2]', False), ('', False), ('{"a": "\\"}"', False)])
def test_json_done(text, done):
    assert _json_done(text) == done
    if done:  # the parsed object is the first one, whatever follows
        assert extract_json(text)[0] == extract_json(text + ' more text {"action": "accept"}')[0]

def test_json_stop_per_row():
    _, tok = tiny_model_and_tokenizer()
    enc = lambda t: tok(t, add_special_tokens=False)["input_ids"]
    prompt = enc("Round 1 of 8.")
    walk = enc('{"action": "walk"}')
    longer = enc('{"action": "walk" , "x": 1, "y": 2}')[:len(walk)]  # the same length, still open
    ids = torch.tensor([prompt + walk, prompt + longer])
    done = json_stop(tok, len(prompt))(ids, None)
    assert done.dtype == torch.bool and done.tolist() == [True, False]
    one = lambda reply: bool(json_stop(tok, len(prompt))(torch.tensor([prompt + enc(reply)]), None)[0])
    assert one('{"action": "accept"}') and one(' {"a": {"b": "}"}}')
    assert not one('{"action": "offer", "price": 3') and not one('walk {"action": "walk"}') and not one('{"a": 1')

def test_fast_prefill_matches_plain_generate_and_keeps_order():
    model, tok = tiny_model_and_tokenizer()
    cs = convs()
    plain = chat_generate(model, tok, cs, max_new_tokens=12, temperature=0, share_prefix=False, batch_size=len(cs))
    reset_gen_stats()
    fast = chat_generate(model, tok, cs, max_new_tokens=12, temperature=0, batch_size=len(cs))
    assert fast == plain
    assert GEN_STATS["calls"] == 1 and GEN_STATS["prefill_tokens"] < GEN_STATS["prompt_tokens"] < GEN_STATS["padded_tokens"]
    # more conversations than a batch: sorted by prompt length inside, returned in the original order
    for bs in (2, 3):
        assert chat_generate(model, tok, cs, max_new_tokens=12, temperature=0, batch_size=bs) == plain
    single = [chat_generate(model, tok, [c], max_new_tokens=12, temperature=0)[0] for c in cs]
    assert single == plain

def test_sorting_really_reorders(monkeypatch):
    "Each batch holds prompts of neighbouring lengths, and each reply lands at its conversation's index."
    import bazaarbatna.models as M
    model, tok = tiny_model_and_tokenizer()
    cs = convs()
    seen = []
    orig = M._prefilled_cache
    def spy(model, rows, room):
        seen.append(sorted(map(len, rows))); return orig(model, rows, room)
    monkeypatch.setattr(M, "_prefilled_cache", spy)
    out = chat_generate(model, tok, cs, max_new_tokens=6, temperature=0, batch_size=3)
    lens = sorted(len(tok(tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True), add_special_tokens=False)["input_ids"]) for c in cs)
    assert [l for b in seen for l in b] == lens
    assert out == [chat_generate(model, tok, [c], max_new_tokens=6, temperature=0)[0] for c in cs]

def test_stop_at_json_only_shortens():
    model, tok = tiny_model_and_tokenizer()
    cs = convs(4)
    full = chat_generate(model, tok, cs, max_new_tokens=16, temperature=0)
    stop = chat_generate(model, tok, cs, max_new_tokens=16, temperature=0, stop_at_json=True)
    assert all(f.startswith(s) for f, s in zip(full, stop))

def test_sampling_reproducible_with_fast_path():
    model, tok = tiny_model_and_tokenizer()
    cs = convs(5)
    a = chat_generate(model, tok, cs, max_new_tokens=8, temperature=1.0, seed=3, batch_size=2)
    assert a == chat_generate(model, tok, cs, max_new_tokens=8, temperature=1.0, seed=3, batch_size=2)
