"""The specialist registry: every council role, built-in or added, is one ``Specialist``
registered with ``register_specialist``.

A specialist is declared in one module and registered with one call::

    register_specialist(Specialist(name, system_prompt, builder, rule))

where ``builder(ctx, mask) -> RoleMessage`` writes its prompt for the LLM backends
(``council/roles.py``), ``rule(ctx) -> SpecialistVote`` is its offline rule analyst and the
optional ``batch_rule(arrays, grid) -> RoleVotes`` its votes on many days at once
(``council/rule_batch.py``; without one that path runs ``rule`` on each day's context).

Nothing registers at import: the seven built-in specialists (``council/specialists.py``) are
registered by the composition root (``stocker_core.composition.register_all``), first and in
their fixed order; the council's role order is the registration order. ``ROLE_NAMES``
(``roles.py``), ``ROLES`` and the rule analysts' ``RULE_ANALYSTS`` (``analysts.py``) are live
views of the registry, so a specialist registered after they were imported is seen by
everything that reads them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from stocker_core.errors import InvalidNameError

if TYPE_CHECKING:
    from stocker_core.council.day_arrays import DayGrid, TickerArrays
    from stocker_core.council.models import SpecialistVote
    from stocker_core.council.vote_columns import RoleVotes
    from stocker_core.decision_context.decision import DecisionContext
    from stocker_core.text_events.masking import PromptMask

T = TypeVar("T")


@dataclass(frozen=True)
class RoleMessage:
    """The user message of a role and, for the chart role, the chart image."""

    text: str
    image_path: Path | None = None


@dataclass(frozen=True)
class Specialist:
    """One council role: its name, what the LLM backends ask it, and its offline rules."""

    name: str
    system_prompt: str
    """The role's system prompt (``roles.expertise_prompt(...)`` adds the shared output rules)."""
    builder: Callable[[DecisionContext, PromptMask], RoleMessage]
    """The role's user message on a context, every name, date and price through the mask."""
    rule: Callable[[DecisionContext], SpecialistVote]
    """The rule analyst: a deterministic vote on a context (``abstain`` when data is missing)."""
    batch_rule: Callable[[TickerArrays, DayGrid], RoleVotes] | None = None
    """The same votes on many days at once, from the ticker's arrays cut at each day
    (``day_arrays``); None: the batch runs ``rule`` on each day's context."""
    rule_revision: int = 0
    """Raised when the rule changes: it enters the rule votes' cache key, so only this role's
    cached votes are recomputed."""


_SPECIALISTS: dict[str, Specialist] = {}
_lock = threading.RLock()


def register_specialist(specialist: Specialist) -> Specialist:
    """Add ``specialist`` to the council, after those already registered; InvalidNameError
    when its name is taken (unregister the old one first to replace it)."""
    with _lock:
        if specialist.name in _SPECIALISTS:
            raise InvalidNameError(f"specialist {specialist.name!r} is already registered")
        if not specialist.name.isidentifier():
            raise InvalidNameError(f"specialist name {specialist.name!r}: use letters, digits and _")
        _SPECIALISTS[specialist.name] = specialist
    return specialist


def unregister_specialist(name: str) -> Specialist:
    """Remove the specialist ``name`` from the council (InvalidNameError when unknown)."""
    with _lock:
        if name not in _SPECIALISTS:
            raise _unknown(name)
        return _SPECIALISTS.pop(name)


@contextmanager
def registered_specialist(specialist: Specialist) -> Iterator[Specialist]:
    """``specialist`` in the council for the block only (tests, experiments)."""
    register_specialist(specialist)
    try:
        yield specialist
    finally:
        unregister_specialist(specialist.name)


def specialists() -> tuple[Specialist, ...]:
    """Every registered specialist in the council's order."""
    return tuple(_SPECIALISTS.values())


def specialist(name: str) -> Specialist:
    """The registered specialist ``name``; InvalidNameError listing the known ones otherwise."""
    try:
        return _SPECIALISTS[name]
    except KeyError:
        raise _unknown(name) from None


def _unknown(name: str) -> InvalidNameError:
    if not _SPECIALISTS:
        return InvalidNameError(
            f"unknown specialist {name!r}: none is registered (call stocker_core.composition.register_all())"
        )
    return InvalidNameError(f"unknown specialist {name!r}: use one of {', '.join(_SPECIALISTS)}")


class SpecialistNames(Sequence[str]):
    """The registered specialists' names in council order, read live (``ROLE_NAMES``)."""

    def _names(self) -> tuple[str, ...]:
        return tuple(_SPECIALISTS)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpecialistNames | tuple):
            return self._names() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._names())

    def __repr__(self) -> str:
        return repr(self._names())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self._names(),))  # pickled as the names of the moment


class SpecialistMap(Mapping[str, T]):
    """``{name: pick(specialist)}`` over the registered specialists, read live; with
    ``keep``, only the specialists it accepts (``ROLES``, ``RULE_ANALYSTS``)."""

    def __init__(
        self, pick: Callable[[Specialist], T], keep: Callable[[Specialist], bool] | None = None
    ) -> None:
        self._pick = pick
        self._keep = keep

    def _kept(self) -> dict[str, Specialist]:
        return {n: s for n, s in _SPECIALISTS.items() if self._keep is None or self._keep(s)}

    def __getitem__(self, name: str) -> T:
        return self._pick(self._kept()[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._kept())

    def __len__(self) -> int:
        return len(self._kept())

    def __repr__(self) -> str:
        return repr(dict(self.items()))


SPECIALIST_NAMES: Sequence[str] = SpecialistNames()
"""The registered specialists' names in council order, read live (``roles.ROLE_NAMES``)."""
