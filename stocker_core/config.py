"""One Settings object for the whole project, read from ``STOCKER_*`` environment variables."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from stocker_core.data_sources import DataSource, data_source, source_names, source_setting_defaults
from stocker_core.errors import StockerError

SourceName = str
"""A registered data source's name (``data_sources.source_names()``)."""
BackendName = Literal["rule", "openai", "transformers"]
ModeratorName = Literal["rule", "llm"]
LLMMode = Literal["scored", "free"]
StructuredOutput = Literal["auto", "json_schema", "logprobs", "off"]
ExecutorName = Literal["in_process", "celery"]
ChartsMode = Literal["auto", "eager", "on_demand"]

SYNTHETIC_PREFIX = "SYN"
SYNTH_MAX_TICKERS = 5000
"""The most tickers a synthetic count may name: SYN1 … SYN5000 (names and bars stay the
same as the count grows: ticker k draws from its own generator, seeded by (seed, k))."""
_TICKER_COUNT = re.compile(r"\s*([0-9]+)\s*")
TICKER_PATTERN = re.compile(r"^[A-Z0-9][A-Z0-9.^=-]{0,14}$|^\^[A-Z0-9.=-]{1,14}$")
"""An exchange symbol: 1-15 upper-case ASCII letters, digits and ``. ^ = -`` (``BRK.B``,
``^GSPC``, ``GC=F``); ``market.validation.validate_ticker`` also refuses ``..``."""
TICKER_WORDS = "1-15 upper-case letters, digits or . ^ = - (e.g. AAPL, BRK.B, ^GSPC, GC=F)"


def is_ticker(value: object) -> bool:
    """Whether ``value`` is a plausible exchange symbol (``TICKER_PATTERN``, no ``..``)."""
    return isinstance(value, str) and TICKER_PATTERN.fullmatch(value) is not None and ".." not in value


def synthetic_ticker_names(value: str) -> list[str]:
    """``STOCKER_SYNTH_TICKERS`` as names: a count ``"4"`` (ASCII digits) gives SYN1 … SYN4;
    otherwise a comma-separated list of tickers (upper-cased, blanks dropped, duplicates kept
    once). ValueError saying what is expected otherwise."""
    expected = (
        f"expected a count from 1 to {SYNTH_MAX_TICKERS}, or tickers such as ALFA,BETA (A-Z, 0-9, . ^ = -)"
    )
    if _TICKER_COUNT.fullmatch(value):
        digits = value.strip().lstrip("0")
        if not digits or len(digits) > len(str(SYNTH_MAX_TICKERS)) or int(digits) > SYNTH_MAX_TICKERS:
            raise ValueError(expected)
        return [f"{SYNTHETIC_PREFIX}{i}" for i in range(1, int(digits) + 1)]
    names = [part.strip().upper() for part in value.split(",") if part.strip()]
    if not names or not all(is_ticker(name) for name in names):
        raise ValueError(expected)
    return list(dict.fromkeys(names))


DEFAULT_SYNTH_START = date(2021, 1, 1)
DEFAULT_SYNTH_END = date(2024, 1, 1)


def default_synth_start(years: float) -> date:
    """The first day of a synthetic market of ``years`` when STOCKER_SYNTH_START is unset:
    2021-01-01, or for a market longer than 3 years the day that makes it end on 2024-01-01
    (10 years: 2014-01-01), so ``STOCKER_SYNTH_YEARS=10`` is a past decade, not one that runs
    past the exchange calendar. Up to 3 years the market is the one it always was."""
    months = max(1, round(12 * years))
    start = DEFAULT_SYNTH_END.year * 12 + DEFAULT_SYNTH_END.month - 1 - months
    return min(DEFAULT_SYNTH_START, date(start // 12, start % 12 + 1, 1))


FIRST_MONTH = date(1800, 1, 1)
LAST_MONTH = date(2200, 12, 1)
"""The months a month setting may name: market calendars and pandas timestamps end well
inside 0001 … 9999, so a far year is refused where it is read, not deep in a run."""
_MONTH_SPELLING = re.compile(r"[0-9]{4}-[0-9]{2}(-[0-9]{2})?")
"""``YYYY-MM`` or ``YYYY-MM-DD``, ASCII digits only (``strptime`` alone takes ``2016-1``
and other scripts' digits)."""


def parse_month_setting(value: str) -> date:
    """The first day of the month ``value`` names (``YYYY-MM`` or a day ``YYYY-MM-DD``, from
    1800-01 to 2200-12, as partition keys); ValueError saying what is expected otherwise."""
    value = value.strip()
    try:
        if not _MONTH_SPELLING.fullmatch(value):
            raise ValueError(value)
        month = datetime.strptime(value, "%Y-%m-%d" if len(value) > 7 else "%Y-%m").date().replace(day=1)
    except ValueError:
        raise ValueError("expected a month, YYYY-MM (or a day, YYYY-MM-DD)") from None
    if not FIRST_MONTH <= month <= LAST_MONTH:
        raise ValueError(f"expected a month from {FIRST_MONTH:%Y-%m} to {LAST_MONTH:%Y-%m}")
    return month


MAX_SEED = 2**32 - 1
"""The largest seed a setting or option takes (what every generator the project seeds accepts)."""
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
"""How a day setting or a timestamp setting begins (pydantic alone also takes a Unix time, ``0``)."""

# The three reference episodes' real bars and text (package data; see its README.md).
REFERENCE_TASKS_DIR = Path(__file__).resolve().parent / "reference_tasks"


class Settings(BaseSettings):
    """Every default of the project: paths, data source, universe, reward and costs,
    council backend and models, worker counts.

    Every field can be set with an environment variable named ``STOCKER_<FIELD>``,
    e.g. ``STOCKER_HOME=/tmp/x STOCKER_SOURCE=files STOCKER_FILES_DIR=...``; a Dagster
    run takes the same fields from its ``StockerResource``.
    """

    model_config = SettingsConfigDict(env_prefix="STOCKER_", extra="ignore", allow_inf_nan=False)

    home: Path = Field(
        default=Path("data"),
        description="Root of everything generated: the warehouse, charts, models, reports, the CLI's "
        "Dagster instance and the universe file (a relative path is taken from the working folder)",
    )
    source: SourceName = Field(
        default="sample",
        description="Market data source: a registered one (sample: offline, files, yfinance, synthetic, "
        "or one added with register_source)",
    )
    files_dir: Path | None = Field(
        default=None,
        description="Folder of CSV/Parquet bars for the files source: long (a ticker or symbol column) "
        "or one file per symbol",
    )
    start_month: str = Field(
        default="2009-05-01",
        description="First month partition (YYYY-MM or a day; not after this month); on the synthetic "
        "source its first month unless set",
    )
    default_tickers: list[str] = Field(
        default_factory=lambda: ["GOOGL"],
        description="Universe when universe.txt does not exist. Unless set: on the sample source GOOGL "
        "and JPM, JNJ, XOM, PG, KO, WMT, HD, PFE, CVX, UNH; on the synthetic source its tickers",
    )
    main_from: str | None = Field(
        default=None,
        description="The first month `stocker materialize` runs when --from is not given (None: all data; "
        "sample source: 2014-06 unless set)",
    )
    main_to: str | None = Field(
        default=None,
        description="The last month `stocker materialize` runs when --to is not given (None: all data; "
        "sample source: 2018-08, the end of GOOGL's data, unless set)",
    )
    benchmark: str = Field(
        default="^GSPC", description="The council's peer of last resort (synthetic source: ^SYN unless set)"
    )
    peers: dict[str, list[str]] = Field(
        default_factory=dict, description='Peers per ticker, e.g. {"AAPL": ["MSFT"]}'
    )
    commodities: dict[str, str] = Field(
        default_factory=dict, description='Commodity per ticker, e.g. {"XOM": "CL=F"}'
    )

    # Episodes and rewards (SPEC §1): every number finite and in range, checked at load
    starting_cash: float = Field(default=10_000.0, gt=0, le=1e12)
    """Cash at the start of an episode (above 0, at most 10¹²)."""
    episode_months: int = Field(default=2, ge=1, le=120)
    """Months an episode spans from its start month (1 to 120)."""
    transaction_cost: float = Field(default=0.001, ge=0, lt=1)
    """Cost rate ``c`` of every trade: a buy costs quantity × close × (1 + c), a sell returns
    quantity × close × (1 − c) (at least 0, below 1)."""
    invalid_penalty: float = Field(default=0.01, ge=0)
    """Taken off the step's reward for an invalid action (a buy beyond cash, a sell beyond the
    position; at least 0)."""
    w_perf: float = Field(default=0.7, ge=0)
    """Weight of the reward's performance term (at least 0)."""
    w_infl: float = Field(default=0.3, ge=0)
    """Weight of the reward's inflation term (at least 0)."""
    annual_inflation: float = Field(default=0.05, gt=-1, le=10)
    """Yearly inflation of the reward's inflation term (above −1, at most 10)."""
    lookahead_k: int = Field(default=0, ge=0, le=10_000)
    """Sessions ahead that the optional lookahead term looks (0 disables it)."""
    lookahead_weight: float = Field(default=0.0, ge=0)
    """Weight of the optional lookahead term (0 disables it)."""

    # Council (SPEC §1): backend, endpoint, models, runner
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
    text_dir: Path | None = Field(
        default=None,
        description="Folder with news.jsonl, forums.jsonl and macro.jsonl (None: STOCKER_FILES_DIR; on the "
        "sample source without either, the reference tasks' text shipped in the package)",
    )
    news_online: bool = False  # also pull recent yfinance headlines for registered tickers
    """The ``news`` asset also pulls recent yfinance headlines of the registered tickers."""

    # The synthetic market (STOCKER_SOURCE=synthetic): a seeded market with a planted signal
    synth_ic: float = Field(
        default=0.1, ge=-1.0, le=1.0, description="Information coefficient of the planted news factor"
    )
    synth_seed: int = Field(
        default=7,
        ge=0,
        le=MAX_SEED,
        description="Seed (0 to 2³²−1): the same seed gives the same bars and text",
    )
    synth_tickers: str = Field(
        default="4",
        description="A count (4: SYN1 … SYN4, 1 to 5000; the first N names and their bars are those "
        "of any larger count) or names (ALFA,BETA); the default universe on "
        "this source",
    )
    synth_years: float = Field(
        default=3.0,
        gt=0,
        le=40,
        description="Years of sessions to make (whole months; the span must end within the exchange "
        "calendar, a year past today)",
    )
    synth_start: date = Field(
        default=DEFAULT_SYNTH_START,
        description="First calendar day of the market (unset: 2021-01-01, or for more than 3 years the "
        "day that ends it on 2024-01-01, e.g. 2014-01-01 for 10 years; the first month partition "
        "follows it unless STOCKER_START_MONTH is set)",
    )
    synth_persistence: float = Field(
        default=0.8,
        ge=0.0,
        lt=1.0,
        description="AR(1) coefficient of the planted factor (0: independent days)",
    )
    # The yfinance source at universe size (docs/data-sources.md): batches within a request rate
    yfinance_batch_size: int = Field(
        default=50,
        ge=1,
        le=500,
        description="Tickers a Yahoo Finance request asks for at once (a universe is fetched in batches)",
    )
    yfinance_requests_per_minute: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Most Yahoo Finance requests a minute, retries included (rate limits and timeouts "
        "are retried with jittered exponential backoff)",
    )
    # The forward ledger (docs/forward-ledger.md): a simulated clock for replays; the policies recorded
    clock: datetime | None = Field(
        default=None,
        description="An ISO timestamp with zone (None: the wall clock): every source reveals only bars whose "
        "XNYS session closed by it and text published before it; ledger entries made under it are replayed",
    )
    ledger_policies: list[str] = Field(
        default_factory=lambda: ["buy_and_hold", "council", "moderator_grpo", "agent_rl"],
        description="Policies `stocker ledger record` and the ledger asset record (buy_and_hold always)",
    )
    # Charts: drawn by the `charts` asset (eager) or only when something asks (on_demand: the
    # environment's observation draws and keeps a day's chart); auto = eager only for a vision council
    charts: ChartsMode = "auto"
    """``eager``: the ``charts`` asset draws every day's chart; ``on_demand``: a day's chart is
    drawn when something asks for it (the environment's observation, the web page) and kept in
    ``$STOCKER_HOME/charts/``; ``auto``: eager only for a council that sends charts to a vision
    model (``openai`` with ``STOCKER_OPENAI_MULTIMODAL``, ``transformers`` with
    ``STOCKER_HF_MULTIMODAL``)."""

    # Work sizes
    chart_workers: int | None = Field(
        default=None, ge=1, le=1_024, description="Chart processes (None: by the work's size)"
    )
    main_workers: int | None = Field(
        default=None,
        ge=1,
        le=16,
        description="Runs `stocker materialize` executes at once, each in its own process "
        "(None: one per CPU core, at most 4; 1 with the Celery executor)",
    )

    # The environment server (`stocker serve`)
    max_sessions_per_client: int = Field(
        default=32,
        ge=1,
        le=100_000,
        description="Live sessions one client address may hold on the environment server (`stocker serve "
        "--max-sessions-per-client`); raise it to at least a trainer's concurrent environments (TRL's "
        "generation_batch_size) when they all run from one host",
    )

    # Scale-out (`stocker deploy init`): where `stocker materialize` runs each step
    executor: ExecutorName = Field(
        default="in_process", description="in_process: this process; celery: steps on Celery workers"
    )
    celery_broker: str = Field(default="redis://127.0.0.1:6379/0", description="Celery broker URL")
    celery_backend: str | None = Field(default=None, description="Celery result backend (None: the broker)")
    celery_gpu_queue: str | None = Field(
        default=None, description="Celery queue for training steps (a GPU worker listens on it)"
    )
    celery_llm_queue: str | None = Field(
        default=None, description="Celery queue for council vote steps (workers near the LLM server)"
    )

    @field_validator("home", "files_dir", "text_dir", mode="before")
    @classmethod
    def _blank_folder_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        """A blank folder variable (``STOCKER_FILES_DIR=``) means unset, not the working folder."""
        if isinstance(value, str) and not value.strip():
            return cls.model_fields[info.field_name].get_default(call_default_factory=True)
        return value

    @field_validator("synth_start", "clock", mode="before")
    @classmethod
    def _iso_spelling(cls, value: Any, info: ValidationInfo) -> Any:
        """A day or a timestamp is spelt in ISO 8601 (``2021-01-01``), never a number of seconds."""
        if isinstance(value, str) and not _ISO_DAY.match(value.strip()):
            if info.field_name == "clock":
                raise ValueError("expected an ISO timestamp with a zone, e.g. 2016-03-01T22:00:00+00:00")
            raise ValueError("expected a day, YYYY-MM-DD")
        return value

    @field_validator("synth_start", mode="after")
    @classmethod
    def _synthetic_start_in_range(cls, value: date) -> date:
        if not FIRST_MONTH <= value <= LAST_MONTH.replace(day=31):
            raise ValueError(f"expected a day from {FIRST_MONTH} to {LAST_MONTH:%Y-%m}-31")
        return value

    @field_validator("benchmark", mode="after")
    @classmethod
    def _a_ticker(cls, value: str) -> str:
        if not is_ticker(value):
            raise ValueError(f"expected a ticker of {TICKER_WORDS}")
        return value

    @field_validator("default_tickers", mode="after")
    @classmethod
    def _tickers(cls, value: list[str]) -> list[str]:
        bad = [name for name in value if not is_ticker(name)]
        if bad:
            raise ValueError(f"expected a JSON list of tickers of {TICKER_WORDS}; not {bad}")
        return value

    @field_validator("peers", "commodities", mode="after")
    @classmethod
    def _tickers_by_ticker(cls, value: dict[str, Any]) -> dict[str, Any]:
        names = [*value, *(name for v in value.values() for name in (v if isinstance(v, list) else [v]))]
        bad = [name for name in names if not is_ticker(name)]
        if bad:
            raise ValueError(f"expected tickers of {TICKER_WORDS}; not {bad}")
        return value

    @field_validator("home", "files_dir", "text_dir", mode="after")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @field_validator("source", mode="after")
    @classmethod
    def _registered_source(cls, value: str) -> str:
        if value not in source_names():
            raise ValueError("expected one of: " + ", ".join(source_names()))
        return value

    @field_validator("clock", mode="after")
    @classmethod
    def _clock_has_zone(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("expected an ISO timestamp with a zone, e.g. 2016-03-01T22:00:00+00:00")
        return value

    @field_validator("start_month", mode="after")
    @classmethod
    def _first_of_month(cls, value: str) -> str:
        month = parse_month_setting(value)
        if month > date.today():
            raise ValueError(f"expected a month no later than this one ({date.today():%Y-%m})")
        return month.isoformat()

    @field_validator("main_from", "main_to", mode="after")
    @classmethod
    def _a_month(cls, value: str | None) -> str | None:
        if value is None or not value.strip():  # blank: all data, as unset
            return None
        return f"{parse_month_setting(value):%Y-%m}"

    @field_validator("synth_tickers", mode="after")
    @classmethod
    def _synthetic_names(cls, value: str) -> str:
        synthetic_ticker_names(value)
        return value

    @model_validator(mode="after")
    def _synthetic_start(self) -> Settings:
        """A synthetic market longer than 3 years without STOCKER_SYNTH_START ends on
        2024-01-01 (``default_synth_start``) rather than years past today."""
        if "synth_start" not in self.model_fields_set:
            self.synth_start = default_synth_start(float(self.synth_years))
        return self

    @model_validator(mode="after")
    def _source_defaults(self) -> Settings:
        """The settings the source sets the default of (``DataSource.setting_defaults``: the
        sample's universe and main span, the synthetic market's tickers, index and first
        month), unless set explicitly."""
        defaults = source_setting_defaults(self.source)
        for field, value in (defaults(self) if defaults is not None else {}).items():
            if field not in self.model_fields_set:
                setattr(self, field, value)
        return self

    @model_validator(mode="after")
    def _openai_key_fallback(self) -> Settings:
        if not self.openai_api_key:
            self.openai_api_key = os.environ.get("OPENAI_API_KEY") or None
        return self

    @property
    def charts_eager(self) -> bool:
        """Whether the ``charts`` asset draws every day's chart: ``eager``, or ``auto`` with a
        council that sends charts to a vision model."""
        if self.charts != "auto":
            return self.charts == "eager"
        return (self.council_backend == "openai" and self.openai_multimodal) or (
            self.council_backend == "transformers" and self.hf_multimodal
        )

    @property
    def data_source(self) -> DataSource:
        """The registered source ``source`` names, as it describes itself (``DataSource``)."""
        return data_source(self.source)

    @property
    def synthetic_tickers(self) -> list[str]:
        """The synthetic market's tickers: ``synth_tickers`` as names (``synthetic_ticker_names``)."""
        return synthetic_ticker_names(self.synth_tickers)

    @property
    def text_folder(self) -> Path | None:
        """Where text events are read from: ``text_dir``, else ``files_dir``, else the text the
        source ships (``DataSource.text_folder``: on the ``sample`` source the reference tasks'
        headlines shipped in the package)."""
        if self.text_dir or self.files_dir:
            return self.text_dir or self.files_dir
        return self.data_source.text_folder

    @property
    def warehouse_path(self) -> Path:
        """The DuckDB file (catalog, lineage, small tables; partitions in ``stocker.parts/`` beside it)."""
        return self.home / "stocker.duckdb"

    @property
    def universe_path(self) -> Path:
        """Plain-text list of registered tickers, one per line."""
        return self.home / "universe.txt"

    @property
    def charts_dir(self) -> Path:
        return self.home / "charts"

    @property
    def dagster_home(self) -> Path:
        """DAGSTER_HOME used by the ``stocker`` CLI when none is set."""
        return self.home / "dagster"


class SettingsError(StockerError, ValueError):
    """A ``STOCKER_*`` variable whose value the settings refuse (one line: the variable, the
    value and what is expected)."""


_BOUND_WORDS = {"gt": "above", "ge": "at least", "lt": "below", "le": "at most"}


def field_bounds(model: type, field: str) -> dict[str, float]:
    """The numeric bounds (``gt``, ``ge``, ``lt``, ``le``) declared on ``model``'s ``field``."""
    info = getattr(model, "model_fields", {}).get(field)
    found: dict[str, float] = {}
    for item in getattr(info, "metadata", ()):
        for key in _BOUND_WORDS:
            if isinstance(getattr(item, key, None), int | float):
                found[key] = getattr(item, key)
    return found


def _number_words(bound: float) -> str:
    """A bound as a user writes it: an integer whole (4294967295), a float short (1e+12)."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


def expected_words(error: dict, model: type | None = None) -> str:
    """What a pydantic error says is expected, in words (``expected a number at least 0``);
    a non-finite number is told the field's range too (``expected a finite number …``)."""
    ctx = error.get("ctx") or {}
    if error.get("type") == "literal_error" and "expected" in ctx:
        choices = [c.strip().strip("'") for c in re.split(r",| or ", str(ctx["expected"])) if c.strip()]
        return "expected one of: " + ", ".join(choices)
    bounds = {key: ctx[key] for key in _BOUND_WORDS if isinstance(ctx.get(key), int | float)}
    kind = "a finite number" if error.get("type") == "finite_number" else "a number"
    if model is not None and (bounds or kind == "a finite number"):  # the whole range, not one side
        field = str(error["loc"][0]) if error.get("loc") else ""
        bounds = field_bounds(model, field) or bounds
    found = [f"{_BOUND_WORDS[key]} {_number_words(bound)}" for key, bound in bounds.items()]
    if found or error.get("type") == "finite_number":
        return " ".join(["expected", kind, " and ".join(found)]).strip()
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return message.replace("Input should be", "expected").strip()


def settings_error_line(exc: Exception) -> str:
    """A pydantic(-settings) error about ``STOCKER_*`` values as one line per variable, e.g.
    ``STOCKER_SOURCE='nope' (expected one of: sample, files, yfinance, synthetic)``."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        parts = []
        for error in exc.errors():
            field = str(error["loc"][0]) if error.get("loc") else ""
            name = f"STOCKER_{field.upper()}" if field else "a STOCKER_* variable"
            value = os.environ.get(name, error.get("input"))
            parts.append(f"{name}={value!r} ({expected_words(error, Settings)})")
        return "; ".join(parts)
    found = re.search(r'field "(\w+)"', str(exc))
    if found:
        name = f"STOCKER_{found.group(1).upper()}"
        return f"{name}={os.environ.get(name)!r} (expected JSON: {str(exc).splitlines()[0]})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def config_problems(exc: Exception, model: type, env_prefix: str, given: Collection[str] = ()) -> str:
    """A pydantic error of a ``BaseSettings`` configuration (the moderator's, the agent's) in
    one line: a value read from ``<env_prefix><FIELD>`` names the variable, as the settings
    do (``STOCKER_AGENT_THETA='nan' (expected a finite number above 0 and below 0.5)``); a
    value ``given`` in code, a YAML file or an option names its field."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    parts = []
    for error in exc.errors():
        loc = [str(part) for part in error.get("loc", ())]
        field = loc[0] if loc else ""
        variable = f"{env_prefix}{field.upper()}"
        if field and field not in given and variable in os.environ:
            parts.append(f"{variable}={os.environ[variable]!r} ({expected_words(error, model)})")
        else:
            parts.append(f"{'.'.join(loc) or 'config'}: {expected_words(error, model)}")
    return "; ".join(parts)


@cache
def _field_adapter(name: str) -> Any:
    from typing import Annotated

    from pydantic import ConfigDict, TypeAdapter

    info = Settings.model_fields[name]
    return TypeAdapter(Annotated[info.annotation, info], config=ConfigDict(allow_inf_nan=False))


def setting_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not a valid ``Settings.<name>`` (what is expected, in words), or None
    when it is: for values that bypass the environment (a sweep's grid, a saved trajectory's
    parameters), held to the same ranges as ``STOCKER_<NAME>``."""
    from pydantic import ValidationError

    try:
        _field_adapter(name).validate_python(value)
    except ValidationError as exc:
        error = dict(exc.errors()[0])
        error["loc"] = (name,)
        return expected_words(error, Settings)
    return None


@lru_cache(maxsize=1)
def _cached_settings() -> Settings:
    from pydantic import ValidationError
    from pydantic_settings import SettingsError as SourceError

    try:
        return Settings()
    except (ValidationError, SourceError) as exc:
        raise SettingsError(settings_error_line(exc)) from None


_active: list[Settings] = []
"""Settings put in force by ``use_settings`` (innermost last)."""


def get_settings(fresh: bool = False) -> Settings:
    """The settings in force: those of an enclosing ``use_settings`` block, else the
    process-wide ones read from the environment (``fresh=True`` re-reads it)."""
    if _active:
        return _active[-1]
    if fresh:
        _cached_settings.cache_clear()
    return _cached_settings()


def activate_settings(settings: Settings) -> None:
    """Put ``settings`` in force for ``get_settings()`` until ``deactivate_settings()``."""
    _active.append(settings)


def deactivate_settings() -> None:
    """Undo the innermost ``activate_settings``."""
    if _active:
        _active.pop()


@contextmanager
def use_settings(settings: Settings) -> Iterator[Settings]:
    """Within the block, code that calls ``get_settings()`` (loaders, app factories; policies
    are passed their settings) sees ``settings``, e.g. a Dagster run's resource configuration."""
    activate_settings(settings)
    try:
        yield settings
    finally:
        deactivate_settings()
