"""The settings of the whole project, read from ``STOCKER_*`` environment variables: ``Settings``
composes the settings of each area (``stocker_core.settings``) into the one object every module
reads, and holds what crosses areas (a source's defaults for the market's fields, when charts
are drawn for the council); ``get_settings``/``use_settings`` put it in force, and a refused
value becomes one line naming the variable (``SettingsError``)."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from stocker_core.data_sources import source_setting_defaults
from stocker_core.errors import StockerError
from stocker_core.settings import (
    ChartsSettings,
    CouncilSettings,
    EnvSettings,
    HomeSettings,
    LedgerSettings,
    MarketSettings,
    RunSettings,
    ServerSettings,
    SyntheticMarketSettings,
    YfinanceSettings,
)

# The three reference episodes' real bars and text (package data; see its README.md).
REFERENCE_TASKS_DIR = Path(__file__).resolve().parent / "reference_tasks"


class Settings(
    RunSettings,
    ServerSettings,
    ChartsSettings,
    LedgerSettings,
    YfinanceSettings,
    SyntheticMarketSettings,
    CouncilSettings,
    EnvSettings,
    MarketSettings,
    HomeSettings,
    BaseSettings,
):
    """Every default of the project: paths, data source, universe, reward and costs,
    council backend and models, worker counts.

    Every field can be set with an environment variable named ``STOCKER_<FIELD>``,
    e.g. ``STOCKER_HOME=/tmp/x STOCKER_SOURCE=files STOCKER_FILES_DIR=...``; a Dagster
    run takes the same fields from its ``StockerResource``.

    Each area declares and checks its own fields in ``stocker_core.settings`` (``HomeSettings``,
    ``MarketSettings``, ``EnvSettings``, ``CouncilSettings``, ``SyntheticMarketSettings``,
    ``YfinanceSettings``, ``LedgerSettings``, ``ChartsSettings``, ``ServerSettings``,
    ``RunSettings``); this class inherits them all (fields in that order: the last base's
    first), so every field is read flat (``settings.source``, ``settings.w_perf``) from its
    ``STOCKER_<FIELD>`` variable, and a function that reads one area may say so by taking that
    area's class.
    """

    model_config = SettingsConfigDict(env_prefix="STOCKER_", extra="ignore", allow_inf_nan=False)

    @model_validator(mode="after")
    def _source_defaults(self) -> Settings:
        """The settings the source sets the default of (``DataSource.setting_defaults``: the
        sample's universe and main span, the synthetic market's tickers, index and first
        month), unless set explicitly; after every area has validated its own fields."""
        defaults = source_setting_defaults(self.source)
        for field, value in (defaults(self) if defaults is not None else {}).items():
            if field not in self.model_fields_set:
                setattr(self, field, value)
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
