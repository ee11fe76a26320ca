"""The per-user cache folder: what is slow to build and the same for every home (a built
exchange calendar, SmolLM2 converted from its GGUF file) is kept there between processes."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/stocker`` (``~/.cache/stocker`` when unset); not created here."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "stocker"
