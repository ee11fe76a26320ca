"""The council (SPEC §1): who votes and who decides, the LLM endpoint or model, how a vote is
asked and read, and how many vote at once."""

from __future__ import annotations

import os
from typing import Literal, Self

from pydantic import BaseModel, Field, model_validator

BackendName = Literal["rule", "openai", "transformers"]
ModeratorName = Literal["rule", "llm"]
LLMMode = Literal["scored", "free"]
StructuredOutput = Literal["auto", "json_schema", "logprobs", "off"]


class CouncilSettings(BaseModel):
    """The council's backend, endpoint, models and runner."""

    council_backend: BackendName = "rule"
    """Who votes: ``rule`` (offline quant analysts), ``openai`` (any OpenAI-compatible endpoint:
    vLLM, the llama.cpp server, Ollama) or ``transformers`` (a local or Hub model,
    ``STOCKER_HF_MODEL``)."""
    council_moderator: ModeratorName = "rule"
    """Who turns the votes into a trade: ``rule``, or ``llm`` (the LLM backend's client)."""
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    """The endpoint of the ``openai`` backend."""
    openai_model: str = "gpt-4o-mini"
    """The model the ``openai`` backend asks for."""
    openai_api_key: str | None = Field(default=None, description="Its key; falls back to OPENAI_API_KEY")
    openai_multimodal: bool = False
    """The ``openai`` backend's model takes images (the chart analyst sends its chart)."""
    hf_model: str | None = None
    """The ``transformers`` backend's model: ``smollm2``, a local model folder or a Hub id. It
    serves the council's votes (and the ``llm`` council moderator); the trained moderator and
    the agent name theirs with ``STOCKER_MODERATOR_MODEL`` and ``STOCKER_AGENT_MODEL``."""
    hf_adapter: str | None = None
    """An optional LoRA adapter folder loaded over ``STOCKER_HF_MODEL`` (PEFT)."""
    hf_multimodal: bool = False
    """``STOCKER_HF_MODEL`` is an image-text-to-text model, loaded with its processor (the chart
    analyst sends its chart)."""
    hf_load_in_4bit: bool = True  # only ever applied when CUDA is present
    """Load ``STOCKER_HF_MODEL`` in 4-bit through bitsandbytes; applied only when CUDA is present
    (on CPU the model always runs unquantized)."""
    llm_timeout_s: float = Field(
        default=60.0, gt=0, le=86_400, description="Timeout of one LLM request, in seconds"
    )
    llm_retries: int = Field(default=3, ge=0, le=100, description="Retries of a failed LLM request")
    llm_backoff_s: float = Field(
        default=0.5, ge=0, le=3_600, description="Back-off before a retry, in seconds"
    )
    llm_max_tokens: int = Field(
        default=256, gt=0, le=1_000_000, description="Most tokens one LLM call generates"
    )
    llm_temperature: float = Field(default=0.0, ge=0, le=100, description="Sampling temperature (0: greedy)")
    llm_concurrency: int = Field(
        default=4, ge=1, le=1_024, description="Concurrent requests to the LLM endpoint"
    )
    council_workers: int = Field(default=4, ge=1, le=1_024, description="Threads voting in parallel")
    llm_mode: LLMMode = Field(
        default="scored",
        description="scored: a vote is read as a distribution over fixed answers (parsing cannot fail); "
        "free: generate text and parse it (kept for comparison)",
    )
    llm_rationale: bool = Field(
        default=False,
        description="Scored votes also generate a one-sentence rationale (cached with the vote)",
    )
    llm_mask: bool = Field(
        default=True,
        description="Mask ticker, names, dates and price levels in every LLM prompt; 0: real ticker, dates "
        "and prices",
    )
    openai_structured: StructuredOutput = Field(
        default="auto",
        description="How the openai backend asks for a vote: auto (json_schema, then logprobs, then text), "
        "json_schema, logprobs or off (text)",
    )
    vision: bool = Field(
        default=False,
        description="The chart analyst sends the day's stored chart PNG to the model as an image",
    )

    @model_validator(mode="after")
    def _openai_key_fallback(self) -> Self:
        if not self.openai_api_key:
            self.openai_api_key = os.environ.get("OPENAI_API_KEY") or None
        return self
