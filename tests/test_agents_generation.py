"Generation hygiene: the generation context restores the training state; end-of-turn ids are complete per tokenizer family."
import pytest
from bazaarbatna.models import end_of_turn_ids, generation_mode, chat_generate
from bazaarbatna.train.checkpoints import tiny_tokenizer, tiny_model_and_tokenizer

LLAMA3 = ("{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>{% endfor %}"
          "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")
GEMMA = ("{{ bos_token }}{% for m in messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"
         "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
PHI3 = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
MISTRAL = ("{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] }} [/INST]{% else %}{{ m['content'] }}</s>{% endif %}{% endfor %}")

FAMILIES = {  # name: (special tokens, eos, template, the tokens that must all stop generation)
    "chatml (SmolLM2, Qwen)": (("<|endoftext|>", "<|im_start|>", "<|im_end|>"), "<|im_end|>", None, {"<|im_end|>", "<|endoftext|>"}),
    "chatml, eos=endoftext": (("<|endoftext|>", "<|im_start|>", "<|im_end|>"), "<|endoftext|>", None, {"<|im_end|>", "<|endoftext|>"}),
    "llama-3": (("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>"),
                "<|end_of_text|>", LLAMA3, {"<|eot_id|>", "<|end_of_text|>", "<|eom_id|>"}),
    "gemma": (("<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"), "<eos>", GEMMA, {"<end_of_turn>", "<eos>"}),
    "phi-3": (("<|endoftext|>", "<|user|>", "<|assistant|>", "<|end|>"), "<|endoftext|>", PHI3, {"<|end|>", "<|endoftext|>"}),
    "mistral": (("<unk>", "<s>", "</s>"), "</s>", MISTRAL, {"</s>"}),
}

@pytest.mark.parametrize("family", list(FAMILIES))
def test_end_of_turn_ids_complete(family):
    special, eos, template, must = FAMILIES[family]
    tok = tiny_tokenizer(special=special, eos=eos, **({"chat_template": template} if template else {}))
    ids = end_of_turn_ids(tok)
    assert {tok.convert_ids_to_tokens(i) for i in ids} >= must
    assert ids[0] == tok.eos_token_id and len(ids) == len(set(ids))
    # the turn end the template actually writes after an assistant message is among them
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}], tokenize=False)
    assert any(tok.convert_ids_to_tokens(i) in text for i in ids)

def test_generation_mode_restores_training_state():
    model, tok = tiny_model_and_tokenizer()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    model.train()
    with generation_mode(model):
        assert not model.training and model.config.use_cache and not model.is_gradient_checkpointing
    assert model.training and model.is_gradient_checkpointing and model.config.use_cache is False
    # and chat_generate (which uses it) leaves the model as it found it, even with a batch
    out = chat_generate(model, tok, [[{"role": "user", "content": "Seller asks 60."}]] * 3, max_new_tokens=5, temperature=0, seed=0)
    assert len(out) == 3 and model.training and model.is_gradient_checkpointing and model.config.use_cache is False

def test_generation_mode_restores_after_error():
    model, _ = tiny_model_and_tokenizer()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False}); model.train()
    with pytest.raises(RuntimeError):
        with generation_mode(model): raise RuntimeError("boom")
    assert model.training and model.is_gradient_checkpointing
