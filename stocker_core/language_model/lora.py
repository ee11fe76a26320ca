"""The project's LoRA: one spec (``LoraSpec``: rank, alpha, dropout, which blocks), one block
of config fields (``LoraFields``, the ``lora_*`` keys) and one builder (``lora_config``) that
every path building an adapter goes through: the moderator's SFT (either teacher) and its RL
stage, the agent's warm start and RL.

LoRA goes on every linear layer but the output head. A tiny (randomly initialised) model also
trains its embeddings and head in full and adapts every block: a LoRA on a random model would
otherwise keep them random and frozen. A pretrained model keeps them frozen, and with
``layers`` its LoRA sits on its last ``layers`` decoder blocks only (``language_model.frozen_prefix`` then
computes the blocks below once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from pydantic import Field

from stocker_core.language_model.field_blocks import FieldBlock
from stocker_core.language_model.tiny_model import TINY

if TYPE_CHECKING:
    from peft import LoraConfig

TINY_TRAINED_MODULES = ["embed_tokens", "lm_head"]
"""Modules a tiny (randomly initialised) model trains in full beside its LoRA (saved with the
adapter, ``modules_to_save``)."""
DECODER_LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""A Llama-like block's linear layers: what a LoRA on chosen blocks adapts (PEFT refuses
``all-linear`` with ``layers_to_transform``)."""


@dataclass(frozen=True)
class LoraSpec:
    """Rank, alpha and dropout of the adapter, and ``layers``: adapt only the last ``layers``
    decoder blocks of a pretrained model (0: every block)."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    layers: int = 0


_DEFAULT = LoraSpec()


class LoraFields(FieldBlock):
    """The LoRA settings as config fields; ``lora_spec()`` reads them back."""

    lora_r: Annotated[int, Field(ge=1, description="LoRA rank (every linear layer but the head)")] = (
        _DEFAULT.r
    )
    lora_alpha: Annotated[int, Field(ge=1, description="LoRA alpha")] = _DEFAULT.alpha
    lora_dropout: Annotated[float, Field(ge=0, lt=1, description="LoRA dropout")] = _DEFAULT.dropout
    lora_layers: Annotated[
        int,
        Field(
            ge=0,
            le=512,
            description="adapt only the last k decoder blocks of a pretrained model (0: every block); the "
            "frozen blocks' outputs for every training state are then computed once and reused for every "
            "step (language_model.frozen_prefix). Ignored by the tiny model, which trains all of itself",
        ),
    ] = _DEFAULT.layers

    def lora_spec(self) -> LoraSpec:
        """The adapter these fields describe."""
        return LoraSpec(self.lora_r, self.lora_alpha, self.lora_dropout, self.lora_layers)


def adapted_blocks(spec: LoraSpec, model: Any) -> list[int] | None:
    """The decoder blocks a LoRA of ``spec`` adapts on ``model`` (its last ``spec.layers``), or
    None for every block (``layers`` 0, or a model that does not say how many it has)."""
    total = int(getattr(model.config, "num_hidden_layers", 0) or 0)
    if not spec.layers or not total:
        return None
    return list(range(max(0, total - spec.layers), total))


class NamedModel(Protocol):
    """A model and the name it was built from (``language_model.factory.LoadedModel``)."""

    model: Any
    name: str


def lora_config(spec: LoraSpec, loaded: NamedModel) -> LoraConfig:
    """The adapter of ``spec`` for ``loaded``: on every linear layer but the head (of the last
    ``spec.layers`` blocks only, for a pretrained model); a tiny model also trains its
    embeddings and head in full and ignores ``spec.layers`` (see the module doc)."""
    from peft import LoraConfig

    tiny = loaded.name == TINY
    blocks = None if tiny else adapted_blocks(spec, loaded.model)
    return LoraConfig(
        r=spec.r,
        lora_alpha=spec.alpha,
        lora_dropout=spec.dropout,
        target_modules=list(DECODER_LINEARS) if blocks else "all-linear",
        task_type="CAUSAL_LM",
        modules_to_save=list(TINY_TRAINED_MODULES) if tiny else None,
        layers_to_transform=blocks,
        layers_pattern="layers" if blocks else None,
    )
