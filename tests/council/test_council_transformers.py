"""The transformers backend with a tiny Llama and a word-level tokenizer built here."""

from __future__ import annotations

import time

import pytest
import torch
import transformers


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    folder = tmp_path_factory.mktemp("tiny_llama")
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = [
        '{ " signal " : 0.4 , " confidence " : 0.7 , " rationale " : " ok " }',
        "Ticker AAPL decision date last close headlines Answer :",
    ]
    tok.train_from_iterator(
        corpus, trainers.WordLevelTrainer(special_tokens=["<pad>", "<bos>", "<eos>", "<unk>"])
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>", unk_token="<unk>"
    )
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(fast),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=256,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def test_transformers_backend_generates_on_cpu(tiny_model_dir, easy_inputs, monkeypatch):
    from stocker_core.config import Settings
    from stocker_core.council.backends import get_backend

    monkeypatch.setenv("STOCKER_COUNCIL_BACKEND", "transformers")
    monkeypatch.setenv("STOCKER_HF_MODEL", str(tiny_model_dir))
    monkeypatch.setenv("STOCKER_LLM_MAX_TOKENS", "12")
    backend = get_backend(Settings())
    assert backend.name == "transformers" and backend.client.device == "cpu"
    assert not backend.client.supports_images
    started = time.perf_counter()
    ctx = easy_inputs.context("2023-08-15")
    results = [backend.vote(role, ctx) for role in ("news", "chart_pattern")]
    assert time.perf_counter() - started < 20
    for result in results:  # an untrained model answers garbage: a valid neutral vote
        assert -1 <= result.vote.signal <= 1 and 0 <= result.vote.confidence <= 1
        assert result.cacheable
    reply = backend.client.complete("system", "Ticker AAPL")
    assert isinstance(reply, str)


def test_missing_model_is_a_clear_error(tmp_path):
    from stocker_core.language_model.clients import LLMError, TransformersClient

    with pytest.raises(LLMError, match="STOCKER_HF_MODEL"):
        TransformersClient(str(tmp_path / "nope"))


def test_lora_adapter_is_loaded_on_top_of_the_base(tiny_model_dir, tmp_path):
    from peft import LoraConfig, PeftModel, get_peft_model

    from stocker_core.language_model.clients import TransformersClient

    base = transformers.AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    lora = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():  # a non-zero B so the adapter changes the output
        for name, param in lora.named_parameters():
            if "lora_B" in name:
                param.fill_(0.5)
    lora.save_pretrained(tmp_path / "adapter")
    plain = TransformersClient(str(tiny_model_dir), max_new_tokens=1)
    adapted = TransformersClient(str(tiny_model_dir), str(tmp_path / "adapter"), max_new_tokens=1)
    assert adapted.model_id.endswith("adapter") and adapted.model_id != plain.model_id
    assert isinstance(adapted.model, PeftModel)
    ids = torch.tensor([[1, 5, 6, 7]])
    with torch.no_grad():
        assert not torch.allclose(plain.model(ids).logits, adapted.model(ids).logits)


def test_a_fields_head_adapter_is_refused_as_a_council_llm(tiny_model_dir, tmp_path):
    from stocker_core.language_model.clients import LLMError, TransformersClient
    from stocker_core.language_model.fields_head import HEAD_CONFIG

    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / HEAD_CONFIG).write_text('{"layer": 1}')
    with pytest.raises(LLMError, match="fields head.*writes no text"):
        TransformersClient(str(tiny_model_dir), str(tmp_path / "adapter"), max_new_tokens=1)


def test_scored_vote_is_the_expectation_of_the_scored_answers(tiny_model_dir, easy_inputs):
    from stocker_core.council.backends import VOTE_ANSWERS, VOTE_PREFIX, VOTE_VALUES, LLMBackend
    from stocker_core.language_model.choices import confidence_of, expected_value
    from stocker_core.language_model.clients import TransformersClient

    client = TransformersClient(str(tiny_model_dir), max_new_tokens=8)
    backend = LLMBackend(client, "transformers")
    ctx = easy_inputs.context("2023-08-15")
    vote = backend.vote("indicator", ctx).vote
    sent = backend.prompts("indicator", ctx)
    p = client.score(sent["system"], sent["user"], VOTE_PREFIX, VOTE_ANSWERS)
    assert vote.signal == pytest.approx(expected_value(p, VOTE_VALUES)) and vote.confidence == pytest.approx(
        confidence_of(p)
    )
    assert not vote.parse_error and vote.rationale.startswith("scored answers")
    with_reason = LLMBackend(client, "transformers", rationale=True)
    assert with_reason.prompt_version("news") != backend.prompt_version("news")  # cached apart
    assert with_reason.vote("indicator", ctx).vote.signal == pytest.approx(vote.signal)
    free = LLMBackend(client, "transformers", mode="free")
    assert free.prompt_version("news") != backend.prompt_version("news")


def test_scored_llm_moderator_picks_a_feasible_choice(tiny_model_dir):
    from stocker_core.council.models import SpecialistVote
    from stocker_core.council.roles import ROLE_NAMES
    from stocker_core.council.vote_moderators import MODERATOR_CHOICES, LLMModerator, choice_action
    from stocker_core.decision_context.decision import PortfolioState
    from stocker_core.language_model.clients import TransformersClient

    moderator = LLMModerator(TransformersClient(str(tiny_model_dir), max_new_tokens=4))
    votes = [SpecialistVote(role=r, signal=0.5, confidence=0.8) for r in ROLE_NAMES]
    action, rationale, parse_error = moderator.decide(votes, PortfolioState(cash=1_000.0, position=3), 99.0)
    assert not parse_error and rationale.startswith("scored: ")
    assert rationale.split("scored: ")[1].split(" (p")[0] in MODERATOR_CHOICES
    assert action.side == "hold" or (action.side == "buy" and action.quantity <= 10) or action.quantity <= 3
    # buy 100% of what 1,000 cash affords at 99 with 0.1% cost: 10 shares; sell 25% of 3: 1
    assert choice_action("buy 100%", 1_000.0, 3, 99.0).quantity == 10
    assert choice_action("buy 50%", 1_000.0, 3, 99.0).quantity == 5
    assert choice_action("sell 25%", 1_000.0, 3, 99.0).quantity == 1
    assert choice_action("sell 100%", 1_000.0, 0, 99.0).side == "hold"
