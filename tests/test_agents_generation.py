"Generation hygiene: the generation context restores the training state; end-of-turn ids are complete per tokenizer family."
import pytest
from bazaarbatna.models import (end_of_turn_ids, template_end_of_turn, END_OF_TURN_TOKENS, generation_mode, chat_generate,
                                is_checkpointing, set_checkpointing)
from bazaarbatna.train.checkpoints import tiny_tokenizer, tiny_model_and_tokenizer

LLAMA3 = ("{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>{% endfor %}"
          "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")
GEMMA = ("{{ bos_token }}{% for m in messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"
         "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
PHI3 = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
MISTRAL = ("{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] }} [/INST]{% else %}{{ m['content'] }}</s>{% endif %}{% endfor %}")

TURN_DONE = ("{% for m in messages %}<|turn|>{{ m['role'] }}: {{ m['content'] }}\n<|turn_done|>{% endfor %}"
             "{% if add_generation_prompt %}<|turn|>assistant: {% endif %}")  # made up: its turn end is in no fixed list
ROLE_END = ("{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }} <|{{ m['role'] }}_over|>{% endfor %}"
            "{% if add_generation_prompt %}[assistant]{% endif %}")  # made up: a per-role end marker, after a space

FAMILIES = {  # name: (special tokens, eos, template, the token the template itself closes an assistant turn with)
    "chatml (SmolLM2, Qwen)": (("<|endoftext|>", "<|im_start|>", "<|im_end|>"), "<|im_end|>", None, "<|im_end|>"),
    "chatml, eos=endoftext": (("<|endoftext|>", "<|im_start|>", "<|im_end|>"), "<|endoftext|>", None, "<|im_end|>"),
    "llama-3": (("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>"),
                "<|end_of_text|>", LLAMA3, "<|eot_id|>"),
    "gemma": (("<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"), "<eos>", GEMMA, "<end_of_turn>"),
    "phi-3": (("<|endoftext|>", "<|user|>", "<|assistant|>", "<|end|>"), "<|endoftext|>", PHI3, "<|end|>"),
    "mistral": (("<unk>", "<s>", "</s>"), "</s>", MISTRAL, "</s>"),
    "made-up turn_done": (("<|eos|>", "<|turn|>", "<|turn_done|>"), "<|eos|>", TURN_DONE, "<|turn_done|>"),
    "made-up per-role end": (("<|eos|>", "<|user_over|>", "<|assistant_over|>"), "<|eos|>", ROLE_END, "<|assistant_over|>"),
}

@pytest.mark.parametrize("family", list(FAMILIES))
def test_end_of_turn_ids_complete(family):
    special, eos, template, turn_end = FAMILIES[family]
    tok = tiny_tokenizer(special=special, eos=eos, **({"chat_template": template} if template else {}))
    ids = end_of_turn_ids(tok)
    toks = [tok.convert_ids_to_tokens(i) for i in ids]
    # EOS first, no duplicates, and the template's own end-of-turn marker is a stop token
    assert ids[0] == tok.eos_token_id and len(ids) == len(set(ids))
    assert turn_end in toks and eos in toks
    assert template_end_of_turn(tok) == [turn_end]
    # and that marker is what the rendered template really writes right after the assistant's text
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}], tokenize=False)
    assert text.split("ok", 1)[1].lstrip().startswith(turn_end)

def test_made_up_turn_end_is_not_in_the_fixed_list():
    "The made-up families are only covered by reading the template."
    assert "<|turn_done|>" not in END_OF_TURN_TOKENS and "<|assistant_over|>" not in END_OF_TURN_TOKENS
    tok = tiny_tokenizer(special=("<|eos|>", "<|turn|>", "<|turn_done|>"), eos="<|eos|>", chat_template=TURN_DONE)
    assert end_of_turn_ids(tok) == [tok.eos_token_id, tok.convert_tokens_to_ids("<|turn_done|>")]
    # the per-role family: only the assistant's end is taken, not the user's
    tok = tiny_tokenizer(special=("<|eos|>", "<|user_over|>", "<|assistant_over|>"), eos="<|eos|>", chat_template=ROLE_END)
    assert end_of_turn_ids(tok) == [tok.eos_token_id, tok.convert_tokens_to_ids("<|assistant_over|>")]

@pytest.mark.parametrize("template", [None, "{{ raise_exception('no chat here') }}"])
def test_end_of_turn_ids_without_usable_template(template):
    "No chat template (or one that raises): EOS first, plus whatever of the fixed list is in the vocab."
    tok = tiny_tokenizer(special=("<|eos|>", "<|turn|>", "<|turn_done|>"), eos="<|eos|>", chat_template=template)
    assert template_end_of_turn(tok) == []
    assert end_of_turn_ids(tok) == [tok.eos_token_id]
    tok = tiny_tokenizer(chat_template=template)  # ChatML specials, no template: the fixed list still finds them
    ids = end_of_turn_ids(tok)
    assert ids[0] == tok.eos_token_id and set(tok.convert_ids_to_tokens(ids)) == {"<|im_end|>", "<|endoftext|>"}

def test_generation_mode_restores_training_state():
    model, tok = tiny_model_and_tokenizer()
    set_checkpointing(model, True)
    model.config.use_cache = False
    model.train()
    with generation_mode(model):
        assert not model.training and model.config.use_cache and not is_checkpointing(model)
    assert model.training and is_checkpointing(model) and model.config.use_cache is False
    # and chat_generate (which uses it) leaves the model as it found it, even with a batch
    out = chat_generate(model, tok, [[{"role": "user", "content": "Seller asks 60."}]] * 3, max_new_tokens=5, temperature=0, seed=0)
    assert len(out) == 3 and model.training and is_checkpointing(model) and model.config.use_cache is False

def test_generation_mode_restores_after_error():
    model, _ = tiny_model_and_tokenizer()
    set_checkpointing(model, True); model.train()
    with pytest.raises(RuntimeError):
        with generation_mode(model): raise RuntimeError("boom")
    assert model.training and is_checkpointing(model)
