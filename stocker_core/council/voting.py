"""Run the council: votes for roles x days in parallel threads, read-first cache,
moderation, and the ``council_policy`` the episode loop plugs in."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pandas as pd

from stocker_core.council.backends import Backend, RuleBackend, VoteResult
from stocker_core.council.cache import VoteCache
from stocker_core.council.models import CouncilDecision, SpecialistVote
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.council.rule_batch import context_table, rule_table
from stocker_core.council.vote_moderators import Moderator, RuleModerator
from stocker_core.decision_context.decision import CouncilInputs, DecisionContext, PortfolioState

Progress = Callable[[int, int], None]
VOTE_FRAME_COLUMNS = ["ticker", "date", "role", "signal", "confidence", "rationale", "parse_error", "cached"]


@dataclass
class CouncilRun:
    """Votes of a run (one row per role x day) and its cache statistics."""

    votes: pd.DataFrame
    stats: dict[str, int] = field(default_factory=dict)


WRITE_EVERY_SECONDS = 2.0
"""Computed votes are written at most this long after the previous write (and at the end)."""
WRITE_MAX_VOTES = 500
"""... or as soon as this many are waiting."""


class _VoteWriter:
    """Buffers computed votes and writes them to the cache in short transactions, so no
    connection (and no DuckDB write lock) is held while the backend computes."""

    def __init__(
        self, cache: VoteCache | None, ticker: str, backend: Backend, every_seconds: float, max_votes: int
    ) -> None:
        self.cache, self.ticker, self.backend = cache, ticker, backend
        self.every_seconds, self.max_votes = every_seconds, max_votes
        self.pending: list[tuple[pd.Timestamp, SpecialistVote, str]] = []
        self.last_write = time.monotonic()

    def add(self, day: pd.Timestamp, vote: SpecialistVote, prompt_version: str) -> None:
        self.pending.append((day, vote, prompt_version))
        due = time.monotonic() - self.last_write >= self.every_seconds
        if len(self.pending) >= self.max_votes or due:
            self.flush()

    def flush(self) -> None:
        if self.cache is not None and self.pending:
            self.cache.store(self.ticker, self.backend.name, self.backend.model_id, self.pending)
        self.pending = []
        self.last_write = time.monotonic()


VoteKey = tuple[str, pd.Timestamp]
"""(role, day) of one vote."""
RuleRow = tuple[float, float, str, bool]
"""A rule vote as (signal, confidence, rationale, parse_error)."""


def _write_rule_votes(
    todo: Sequence[VoteKey],
    computed: dict[VoteKey, RuleRow],
    writer: _VoteWriter,
    versions: dict[str, str],
    progress: Progress | None,
) -> None:
    """Send the array rules' votes of ``todo`` to ``writer`` (when it has a cache), in order."""
    for done, (role, day) in enumerate(todo, start=1):
        if writer.cache is not None:
            signal, confidence, rationale, _ = computed[(role, day)]
            vote = SpecialistVote(role=role, signal=signal, confidence=confidence, rationale=rationale)
            writer.add(day, vote, versions[role])
        if progress:
            progress(done, len(todo))
    writer.flush()


def _backend_votes(
    todo: Sequence[VoteKey],
    context_for: Callable[[pd.Timestamp], DecisionContext],
    backend: Backend,
    new_writer: Callable[[], _VoteWriter],
    versions: dict[str, str],
    max_workers: int,
    progress: Progress | None,
) -> dict[VoteKey, VoteResult]:
    """``backend``'s votes of ``todo`` in threads (one thread for a CPU-bound backend), each
    cacheable one written as it comes; a backend error is a neutral, uncached vote."""
    results: dict[VoteKey, VoteResult] = {}
    contexts = {day: context_for(day) for day in dict.fromkeys(d for _, d in todo)}
    done = 0

    def work(key: VoteKey) -> tuple[VoteKey, VoteResult]:
        role, day = key
        try:
            return key, backend.vote(role, contexts[day])
        except Exception as exc:  # a backend bug must not kill the run
            return key, VoteResult(
                SpecialistVote.neutral(role, f"backend error: {exc}"[:500], parse_error=True), cacheable=False
            )

    if not getattr(backend, "io_bound", True):
        max_workers = 1
    writer = new_writer()
    if todo:
        with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
            for key, result in pool.map(work, todo):
                results[key] = result
                if result.cacheable:
                    writer.add(key[1], result.vote, versions[key[0]])
                done += 1
                if progress:
                    progress(done, len(todo))
    writer.flush()
    return results


def _vote_frame(
    ticker: str,
    days: Sequence[pd.Timestamp],
    roles: Sequence[str],
    computed: dict[VoteKey, RuleRow],
    found: dict[VoteKey, SpecialistVote],
    results: dict[VoteKey, VoteResult],
) -> pd.DataFrame:
    """One row per day x role: the array rules', the cache's or the backend's vote."""
    rows = []
    for day in days:
        for role in roles:
            key = (role, day)
            if key in computed:
                rows.append((ticker, day, role, *computed[key], False))
                continue
            cached = key in found
            vote = found[key] if cached else results[key].vote
            rows.append(
                (ticker, day, role, vote.signal, vote.confidence, vote.rationale, vote.parse_error, cached)
            )
    return pd.DataFrame(rows, columns=VOTE_FRAME_COLUMNS)


def run_votes(
    ticker: str,
    dates: Sequence[date | pd.Timestamp | str],
    context_for: Callable[[pd.Timestamp], DecisionContext],
    backend: Backend,
    cache: VoteCache | None = None,
    roles: Sequence[str] = ROLE_NAMES,
    max_workers: int = 4,
    progress: Progress | None = None,
    write_every_seconds: float = WRITE_EVERY_SECONDS,
    write_max_votes: int = WRITE_MAX_VOTES,
    inputs: CouncilInputs | None = None,
) -> CouncilRun:
    """Votes of ``roles`` on ``dates``: cached ones read first, only misses computed
    (threads across roles x days), cacheable results written back as they come, in short
    transactions (every ``write_every_seconds`` or ``write_max_votes`` votes): no warehouse
    connection is open while the backend works, and a killed run keeps what it wrote.

    ``stats``: hits, misses, parse_failures (among all returned votes), uncached (failed
    calls not written to the cache).

    The rule backend computes its misses with the array rules: together over all days from
    the ticker's ``inputs`` (whose ``context`` is ``context_for``; ``rule_batch.rule_table``),
    else from each day's context (``rule_batch.context_table``).
    """
    days = [pd.Timestamp(d).normalize() for d in dates]
    versions = {role: backend.prompt_version(role) for role in roles}
    found = cache.lookup(ticker, days, backend.name, backend.model_id, versions) if cache else {}
    todo = [(role, day) for day in days for role in roles if (role, day) not in found]
    computed: dict[VoteKey, RuleRow] = {}
    misses = len(todo)

    def new_writer() -> _VoteWriter:
        return _VoteWriter(cache, ticker, backend, write_every_seconds, write_max_votes)

    if todo and _array_rules(backend):
        computed = _rule_rows(todo, roles, context_for, inputs)
        _write_rule_votes(todo, computed, new_writer(), versions, progress)
        todo = []
    results = _backend_votes(todo, context_for, backend, new_writer, versions, max_workers, progress)
    frame = _vote_frame(ticker, days, roles, computed, found, results)
    stats = {
        "hits": sum(1 for k in found if k[0] in versions),
        "misses": misses,
        "parse_failures": int(frame["parse_error"].sum()),
        "uncached": sum(1 for r in results.values() if not r.cacheable),
    }
    return CouncilRun(frame, stats)


def _array_rules(backend: Backend) -> bool:
    """Whether ``backend`` votes with the rule analysts' array rules (a rule backend whose
    ``vote`` is not overridden)."""
    return isinstance(backend, RuleBackend) and type(backend).vote is RuleBackend.vote


def _rule_rows(
    todo: Sequence[tuple[str, pd.Timestamp]],
    roles: Sequence[str],
    context_for: Callable[[pd.Timestamp], DecisionContext],
    inputs: CouncilInputs | None,
) -> dict[tuple[str, pd.Timestamp], tuple[float, float, str, bool]]:
    """The rule votes of the ``todo`` (role, day) pairs as (signal, confidence, rationale,
    parse_error): one table over all their days from ``inputs``, else one per day's context."""
    todo_days = list(dict.fromkeys(d for _, d in todo))
    wanted = [r for r in roles if any(role == r for role, _ in todo)]
    tables = (
        [rule_table(inputs, todo_days, wanted)]
        if inputs is not None
        else [context_table(context_for(day), wanted) for day in todo_days]
    )
    return {
        (role, day): (signal, confidence, rationale, False)
        for table in tables
        for day, role, signal, confidence, rationale in table.rows()
    }


def votes_from_frame(frame: pd.DataFrame) -> list[SpecialistVote]:
    """SpecialistVote objects from rows of a votes frame."""
    return [
        SpecialistVote(
            role=r.role,
            signal=r.signal,
            confidence=r.confidence,
            rationale=r.rationale or "",
            parse_error=bool(r.parse_error),
        )
        for r in frame.itertuples(index=False)
    ]


class Council:
    """Seven specialists, an optional vote cache and a moderator."""

    def __init__(
        self,
        backend: Backend | None = None,
        moderator: Moderator | None = None,
        cache: VoteCache | None = None,
        roles: Sequence[str] = ROLE_NAMES,
        max_workers: int = 4,
    ) -> None:
        self.backend = backend or RuleBackend()
        self.moderator = moderator or RuleModerator()
        self.cache = cache
        self.roles = tuple(roles)
        self.max_workers = max_workers

    def votes(self, ctx: DecisionContext) -> tuple[list[SpecialistVote], dict[str, int]]:
        """The votes of every role on ``ctx.date`` (cache first) and the run stats."""
        run = run_votes(
            ctx.ticker, [ctx.date], lambda _day: ctx, self.backend, self.cache, self.roles, self.max_workers
        )
        return votes_from_frame(run.votes), run.stats

    def decide(self, ctx: DecisionContext) -> CouncilDecision:
        """Votes, then the moderator's feasible action for ``ctx.portfolio``."""
        votes, _ = self.votes(ctx)
        action, rationale, parse_error = self.moderator.decide(votes, ctx.portfolio, ctx.price)
        return CouncilDecision(votes=votes, action=action, rationale=rationale, parse_error=parse_error)

    def policy(self, ctx: DecisionContext, portfolio: PortfolioState | None = None) -> dict[str, Any]:
        """``{"side", "quantity"}`` for the episode loop (moderator reset at step 0)."""
        if portfolio is not None:
            ctx = dataclasses.replace(ctx, portfolio=portfolio)
        if ctx.portfolio.step == 0:
            self.moderator.reset()
        return self.decide(ctx).action.model_dump()


_DEFAULT_COUNCIL: Council | None = None


def council_policy(
    ctx: DecisionContext, portfolio: PortfolioState | None = None, council: Council | None = None
) -> dict[str, Any]:
    """The council as a policy: DecisionContext (+ portfolio) -> ``{"side", "quantity"}``.

    Without ``council`` a process-wide rule council (rule moderator, no cache) is used.
    """
    global _DEFAULT_COUNCIL
    if council is None:
        if _DEFAULT_COUNCIL is None:
            _DEFAULT_COUNCIL = Council()
        council = _DEFAULT_COUNCIL
    return council.policy(ctx, portfolio)
