"""The tiny model's sizes: one spec the factory builds from (``TinyModelSpec``) and one block
of config fields (``TinyModelFields``, the ``tiny_*`` keys) that the moderator's and the
agent's configs inherit, each with its own default sizes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, model_validator

from stocker_core.language_model.field_blocks import FieldBlock

TINY = "tiny"
"""The name of the tiny model (``TrainingConfig.model``, ``AgentConfig.model``)."""


@dataclass(frozen=True)
class TinyModelSpec:
    """The sizes of a tiny (randomly initialised) Llama: hidden size (a multiple of ``heads``),
    MLP size, decoder blocks, attention heads."""

    hidden_size: int = 128
    intermediate_size: int = 256
    layers: int = 2
    heads: int = 4


_DEFAULT = TinyModelSpec()


class TinyModelFields(FieldBlock):
    """The tiny model's sizes as config fields; ``tiny_model_spec()`` reads them back."""

    tiny_hidden_size: Annotated[
        int, Field(ge=1, le=8_192, description="Hidden size of the tiny model (a multiple of tiny_heads)")
    ] = _DEFAULT.hidden_size
    tiny_intermediate_size: Annotated[
        int, Field(ge=1, le=32_768, description="MLP size of the tiny model")
    ] = _DEFAULT.intermediate_size
    tiny_layers: Annotated[int, Field(ge=1, le=64, description="Layers of the tiny model")] = _DEFAULT.layers
    tiny_heads: Annotated[int, Field(ge=1, le=256, description="Attention heads of the tiny model")] = (
        _DEFAULT.heads
    )

    @model_validator(mode="after")
    def _heads_divide_hidden(self) -> TinyModelFields:
        if self.tiny_hidden_size % self.tiny_heads:
            raise ValueError(
                f"tiny_hidden_size {self.tiny_hidden_size} must be a multiple of tiny_heads {self.tiny_heads}"
            )
        return self

    def tiny_model_spec(self) -> TinyModelSpec:
        """The sizes the factory builds the tiny model with."""
        return TinyModelSpec(
            self.tiny_hidden_size, self.tiny_intermediate_size, self.tiny_layers, self.tiny_heads
        )
