"""The environment server's wire format as pydantic models: what ``/schema`` documents,
what the server sends and what ``stocker_core.env.client`` parses.

Payload bounds (a response stays a few tens of KB whatever the data):
``price_history`` the last ``PRICE_HISTORY_LIMIT`` closes; ``headlines``,
``forum_posts`` and ``macro_events`` the latest ``EVENT_LIMIT`` each, texts cut
to ``TEXT_CHARS`` characters; ``peers`` at most ``SYMBOL_LIMIT`` symbols with their
last ``SYMBOL_CLOSES`` closes; the chart as a path, and as base64 PNG (~60 KB) only
when asked for with ``include_chart``.
"""

from __future__ import annotations

from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from stocker_core.env.observation_schema import ObservationFields

PRICE_HISTORY_LIMIT = 252
EVENT_LIMIT = 20
TEXT_CHARS = 300
SYMBOL_LIMIT = 8
SYMBOL_CLOSES = 20
EPISODE_ID_CHARS = 128


class ChartInfo(BaseModel):
    """The decision day's 768×768 candlestick chart (60 sessions up to the day)."""

    path: str | None = Field(
        None, description="$STOCKER_HOME/charts/<TICKER>/<date>.png when rendered by the charts asset"
    )
    png_base64: str | None = Field(
        None, description="the PNG, base64, only with include_chart (rendered on demand if no file)"
    )


class Headline(BaseModel):
    """A news headline about the ticker from the 7 days up to the decision."""

    date: str
    published_at: str = Field(description="UTC instant; strictly before the decision cut-off")
    headline: str = Field(max_length=TEXT_CHARS)
    source: str = ""
    sentiment: str | None = None


class ForumPost(BaseModel):
    """A forum/Reddit post about the ticker published before the decision."""

    date: str
    published_at: str
    subreddit: str = ""
    score: int = 0
    text: str = Field(max_length=TEXT_CHARS)


class MacroEvent(BaseModel):
    """A macro event (CPI print, FOMC decision, ...) published before the decision."""

    date: str
    published_at: str
    country: str = ""
    headline: str = Field(max_length=TEXT_CHARS)
    policy_signal: str | None = None


class SymbolCloses(BaseModel):
    """Closes of a peer stock, commodity or rate up to the decision day."""

    symbol: str
    kind: Literal["peer", "commodity", "rate"]
    dates: list[str] = Field(max_length=SYMBOL_CLOSES)
    closes: list[float] = Field(max_length=SYMBOL_CLOSES)


_PortfolioFields: type[BaseModel] = create_model(
    "_PortfolioFields", **{name: (hint, ...) for name, hint in get_type_hints(ObservationFields).items()}
)
"""The observation's portfolio fields as a pydantic base, from their one declaration
(``observation_schema.ObservationFields``)."""


class ObservationModel(_PortfolioFields):  # the portfolio fields first, then the council inputs
    """What the agent sees before acting at ``step``: the portfolio and the council inputs,
    all point in time (the decision is taken at the day's NYSE close, ``cutoff``)."""

    model_config = ConfigDict(extra="allow")

    price_history: list[float] = Field(
        default_factory=list, description=f"the last {PRICE_HISTORY_LIMIT} closes up to and including date"
    )
    cutoff: str | None = Field(None, description="the decision instant (UTC): the NYSE close of date")
    chart: ChartInfo | None = None
    indicators: dict[str, float | None] = Field(
        default_factory=dict, description="RSI14, MACD 12/26/9, SMA20/50/200, Bollinger 20/2, ATR14 of date"
    )
    headlines: list[Headline] = Field(default_factory=list, max_length=EVENT_LIMIT)
    forum_posts: list[ForumPost] = Field(default_factory=list, max_length=EVENT_LIMIT)
    peers: list[SymbolCloses] = Field(default_factory=list, max_length=SYMBOL_LIMIT)
    macro_events: list[MacroEvent] = Field(default_factory=list, max_length=EVENT_LIMIT)


class StateModel(BaseModel):
    """``GET /state``: the observation plus the episode so far."""

    model_config = ConfigDict(extra="allow")

    session_id: str
    episode_id: str = Field(description="reset's episode_id (OpenEnv's state contract), else a new id")
    step_count: int = Field(ge=0, description="steps taken in this episode")
    episode_key: str
    task_id: str | None = None
    observation: ObservationModel
    total_reward: float
    rewards: list[float]
    invalid_count: int
    max_drawdown: float
    ideal_total: float
    buy_and_hold_final: float
    done: bool


class ResetRequest(BaseModel):
    """``POST /reset``: start a session on a task alias or an episode partition key."""

    model_config = ConfigDict(extra="forbid")

    task_id: str | None = Field(None, description="task_easy | task_medium | task_hard")
    episode: str | None = Field(None, description="partition key, e.g. AAPL|2023-08-01")
    session_id: str | None = Field(
        None, description="restart this session (or create it under this id); default: a new id"
    )
    include_chart: bool = Field(False, description="send the chart PNG as base64 in observations")
    episode_id: str | None = Field(
        None,
        min_length=1,
        max_length=EPISODE_ID_CHARS,
        description="your name for this episode, echoed by state (OpenEnv); default: a new id",
    )
    seed: int | None = Field(
        None, ge=0, description="accepted for OpenEnv's reset; episodes are deterministic: it changes nothing"
    )


class ErrorAnswer(BaseModel):
    """Every 4xx/5xx answer of the server: ``{"error": "what went wrong and what to do"}``."""

    error: str


class StepResponse(BaseModel):
    """The answer of ``/reset`` (reward None) and ``/step``."""

    model_config = ConfigDict(extra="allow")

    session_id: str
    observation: ObservationModel
    reward: float | None = None
    done: bool
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="the reward's terms (step), the episode and its ideal total (reset)"
    )
    info: dict[str, Any] = Field(default_factory=dict, description="the same as metadata (openenv-core 0.3)")


def step_request_schema(action_schema: dict[str, Any]) -> dict[str, Any]:
    """``POST /step``'s body: the action, plus an optional ``include_chart`` for this step
    (also accepted wrapped: ``{"action": {...}, "include_chart": true}``)."""
    schema = {**action_schema, "properties": dict(action_schema.get("properties", {}))}
    schema["properties"]["include_chart"] = {
        "type": "boolean",
        "description": "send the chart PNG as base64 in this step's observation",
    }
    return schema


def schema_document(action_schema: dict[str, Any]) -> dict[str, Any]:
    """``GET /schema``: JSON schemas of action, observation, state and the requests."""
    return {
        "action": action_schema,
        "step": step_request_schema(action_schema),
        "observation": ObservationModel.model_json_schema(),
        "state": StateModel.model_json_schema(),
        "reset": ResetRequest.model_json_schema(),
        "step_response": StepResponse.model_json_schema(),
        "limits": {
            "price_history": PRICE_HISTORY_LIMIT,
            "events": EVENT_LIMIT,
            "text_chars": TEXT_CHARS,
            "symbols": SYMBOL_LIMIT,
            "symbol_closes": SYMBOL_CLOSES,
        },
    }
