"""The agent's tools as the environment server's research tools (``env.research_tools``): the
same catalog, schemas and point-in-time answers as the agent's loop, the TRL environment and the
verifiers environment."""

from __future__ import annotations

from typing import Any

from stocker_core.agent.tool_catalog import tool_schemas
from stocker_core.config import Settings
from stocker_core.env.research_tools import register_research_tools as register_in_env
from stocker_core.errors import StockerError

__all__ = ["AgentResearchTools", "register_research_tools"]


class AgentResearchTools:
    """``AgentTools`` of a ticker at a decision day, for any session of the server."""

    def descriptors(self) -> list[dict[str, Any]]:
        """The agent's seven tools as MCP descriptors."""
        return [
            {
                "name": schema["function"]["name"],
                "description": schema["function"]["description"],
                "inputSchema": schema["function"]["parameters"],
            }
            for schema in tool_schemas()
        ]

    def call(
        self, settings: Settings, ticker: str, day: str, name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """The tool's answer from the data up to ``day``'s close; an error answer when the
        ticker's data cannot be read (e.g. a reference task outside the configured source)."""
        from stocker_core.agent.policy import agent_data
        from stocker_core.agent.tools import AgentTools

        try:
            data = agent_data(ticker, settings)
        except StockerError as exc:
            return {"error": f"no research data for {ticker}: {exc}"}, False
        outcome = AgentTools(data, day).call(name, arguments)
        return outcome.result, outcome.valid


def register_research_tools() -> None:
    """Offer the agent's tools on the environment server (called by the composition root)."""
    register_in_env(AgentResearchTools())
