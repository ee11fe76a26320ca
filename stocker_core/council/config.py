"""Council settings, read from ``STOCKER_*`` environment variables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

BackendName = Literal["rule", "openai", "transformers"]
ModeratorName = Literal["rule", "llm"]


class CouncilSettings(BaseSettings):
    """Backend, endpoint, model and runner settings of the council.

    ``STOCKER_COUNCIL_BACKEND=rule|openai|transformers``; the OpenAI key falls back to
    ``OPENAI_API_KEY``; ``STOCKER_TEXT_DIR`` (else ``STOCKER_FILES_DIR``) holds the
    ``news.jsonl`` / ``forums.jsonl`` / ``macro.jsonl`` drop files.
    """

    model_config = SettingsConfigDict(env_prefix="STOCKER_", extra="ignore")

    council_backend: BackendName = "rule"
    council_moderator: ModeratorName = "rule"
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_model: str = "gpt-4o-mini"
    openai_api_key: str | None = None
    openai_multimodal: bool = False
    hf_model: str | None = None
    hf_adapter: str | None = None
    hf_multimodal: bool = False
    hf_load_in_4bit: bool = True  # only ever applied when CUDA is present
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_retries: int = Field(default=3, ge=0)
    llm_backoff_s: float = Field(default=0.5, ge=0)
    llm_max_tokens: int = Field(default=256, gt=0)
    llm_temperature: float = Field(default=0.0, ge=0)
    llm_concurrency: int = Field(default=4, ge=1)
    council_workers: int = Field(default=4, ge=1)
    text_dir: Path | None = None
    news_online: bool = False  # also pull recent yfinance headlines for registered tickers
    files_dir: Path | None = None

    @model_validator(mode="after")
    def _fallbacks(self) -> CouncilSettings:
        if not self.openai_api_key:
            self.openai_api_key = os.environ.get("OPENAI_API_KEY") or None
        return self

    @property
    def text_folder(self) -> Path | None:
        """Where text events are read from: STOCKER_TEXT_DIR, else STOCKER_FILES_DIR."""
        folder = self.text_dir or self.files_dir
        return Path(folder).expanduser().resolve() if folder is not None else None
