"""The research tools the environment server offers over MCP beside trading (price history,
indicators, news, ...): a registry, since the tools live in a higher floor (the agent's
``AgentTools``) than the server. The composition root registers the agent's
(``stocker_core.agent.env_tools.register_research_tools``); without it the server offers the
trading tools alone."""

from __future__ import annotations

from typing import Any, Protocol

from stocker_core.config import Settings

__all__ = ["ResearchTools", "register_research_tools", "registered_research_tools"]


class ResearchTools(Protocol):
    """Tools that read the data of a ticker up to a decision day, never past it."""

    def descriptors(self) -> list[dict[str, Any]]:
        """MCP tool descriptors: ``{"name", "description", "inputSchema"}`` each."""
        ...

    def call(
        self, settings: Settings, ticker: str, day: str, name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """(the answer, whether the call was valid): ``{"error": ...}`` and False for a bad call."""
        ...


_REGISTERED: list[ResearchTools] = []


def register_research_tools(tools: ResearchTools) -> None:
    """Offer ``tools`` on every server built from now on (replaces an earlier registration)."""
    _REGISTERED[:] = [tools]


def registered_research_tools() -> ResearchTools | None:
    """The registered research tools, or None when nothing registered them."""
    return _REGISTERED[0] if _REGISTERED else None
