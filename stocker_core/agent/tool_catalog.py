"""The agent's tool names, families and JSON schemas, readable without pandas or transformers.

The schemas are derived from ``AgentTools``' typed signatures and docstrings by
``transformers.utils.get_json_schema`` (what TRL uses) and stored beside this module
(``tool_schemas.json``), so ``stocker agent tools`` answers in well under a second. A test
holds the stored file equal to the derivation (``tools.derived_tool_schemas``); after changing a
tool, rewrite it with ``python -m stocker_core.agent.tools``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

TOOL_FAMILIES: dict[str, str] = {
    "get_price_history": "market",
    "get_indicators": "market",
    "get_fundamentals": "fundamentals",
    "get_news": "sentiment",
    "get_forum_posts": "sentiment",
    "get_macro_series": "macro",
    "get_macro_events": "macro",
}
TOOL_NAMES = tuple(TOOL_FAMILIES)
SCHEMAS_FILE = Path(__file__).with_name("tool_schemas.json")


@lru_cache(maxsize=1)
def _stored() -> str:
    return SCHEMAS_FILE.read_text(encoding="utf-8")


def tool_schemas() -> list[dict[str, Any]]:
    """The JSON schema of every tool, as TRL and chat templates expect them (a fresh copy)."""
    return json.loads(_stored())
