"""Recording: each policy's decision for the next session, written before that session's bar exists.

The decision day is the last session closed by the clock (``STOCKER_CLOCK``, else now); the
entry decides for the session after it. Each (ticker, policy) keeps one paper account from its
first entry on: the policy replays that span of sessions up to the decision day through the
trading environment (the same arithmetic as a backtest), and the entry records where the last
trade leaves it. A session whose bar exists — in the warehouse or the source — is refused
(``LedgerRefusedError``), and nothing is written; entries already recorded are never rewritten.

A replay (``STOCKER_CLOCK``: entries ``replayed``) on a home that already holds later bars reads
what is stored up to its clock, never a bar after it: the decision reads the bars up to the
decision day, and the stored bars after the clock — the replay's future, which no policy is
shown — do not refuse it. What the clock reveals decides; a live recording still refuses a
session whose bar the warehouse holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

import pandas as pd

from stocker_core.config import Settings
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.policies import is_upper_bound, make_batch_decider, make_policy
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import InvalidNameError, StockerError, UnknownTickerError
from stocker_core.evaluation.backtests import check_policy_names
from stocker_core.ledger.entries import BENCHMARK, GENESIS, LedgerEntry, Mode, chain
from stocker_core.ledger.reader import Ledger, read_ledger
from stocker_core.ledger.service import refuse_unless_verified
from stocker_core.ledger.store import Head, LedgerInputError, LedgerIntegrityError, LedgerStore
from stocker_core.market.bars import configured_source, load_bars
from stocker_core.market.clock import (
    ClockError,
    clock_now,
    close_of,
    is_session,
    last_closed_session,
    next_session,
    previous_session,
)
from stocker_core.universe import read_universe
from stocker_core.warehouse.db import Warehouse, frame_version

SEED = 0


class LedgerRefusedError(StockerError, RuntimeError):
    """A recording whose outcome is already knowable: refused, nothing written (exit 1)."""


@dataclass(frozen=True)
class SessionPlan:
    """What a recording decides: at ``decided_on``'s close, for ``for_session``, at ``instant``."""

    decided_on: date
    for_session: date
    instant: pd.Timestamp
    mode: Mode


@dataclass
class RecordResult:
    """What a recording wrote (``written``), what was there already, and tickers left out."""

    plan: SessionPlan
    written: list[LedgerEntry] = field(default_factory=list)
    already: list[LedgerEntry] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    finished: Head | None = None
    """The head an interrupted earlier recording was finished at (its file was there, ``HEAD``
    had not moved), or None."""


def plan_session(settings: Settings, for_session: date | None = None) -> SessionPlan:
    """The decision and target sessions at the clock; LedgerInputError for a session that is not
    one or whose decision day has not closed, LedgerRefusedError for one already closed."""
    mode: Mode = "replayed" if settings.clock is not None else "live"
    instant = clock_now(settings.clock)
    try:
        last = last_closed_session(instant)
        if for_session is None:
            return SessionPlan(last, next_session(last), instant, mode)
        if not is_session(for_session):
            raise LedgerInputError(f"{for_session} is not an XNYS session: pick a trading day")
        decided_on = previous_session(for_session)
    except ClockError as exc:
        raise LedgerInputError(str(exc)) from None
    if close_of(for_session) <= instant:
        raise LedgerRefusedError(
            f"refused: {for_session} closed at {close_of(for_session).isoformat()}, before the clock "
            f"{instant.isoformat()}: its outcome is knowable (record for {next_session(last)} instead)"
        )
    if decided_on > last:
        raise LedgerInputError(
            f"the decision for {for_session} is taken at {decided_on}'s close, which has not come yet "
            f"(clock {instant.isoformat()}; the next session to record is {next_session(last)})"
        )
    return SessionPlan(decided_on, for_session, instant, mode)


def check_policies(names: Sequence[str]) -> list[str]:
    """The policies to record, buy-and-hold first (always); InvalidNameError for an unknown one or
    a hindsight bound."""
    names = [n.strip() for n in names if n.strip()]
    check_policy_names(names)
    future = [n for n in names if is_upper_bound(n)]
    if future:
        raise InvalidNameError(f"{', '.join(future)} sees the future: a hindsight bound cannot be recorded")
    return list(dict.fromkeys([BENCHMARK, *names]))


def outcome_exists(settings: Settings, ticker: str, session: date) -> str | None:
    """Where ``ticker``'s bar of ``session`` already is (``warehouse`` or the source's name), or None.

    Under ``STOCKER_CLOCK`` only what the clock reveals counts: a bar the warehouse stored
    before the replay (the home was built past the clock) lies after the clock, which no
    decision reads (``_bars_until``), so it does not make the outcome knowable to the replay."""
    after = session + timedelta(days=1)
    if (
        settings.clock is None
        and settings.warehouse_path.exists()
        and len(Warehouse(settings.warehouse_path).read_prices(ticker, session, after))
    ):
        return "warehouse"
    source = configured_source(settings)
    try:
        return source.name if len(source.fetch(ticker, session, after)) else None
    except UnknownTickerError:
        return None


def _bars_until(settings: Settings, ticker: str, day: date) -> tuple[pd.DataFrame, str]:
    """``ticker``'s bars on or before ``day`` and where they came from (empty when none): the
    stored ones when the warehouse covers them, never a bar after ``day``."""
    try:
        bars, source = load_bars(settings, ticker, None, day + timedelta(days=1))
    except UnknownTickerError:
        return pd.DataFrame(columns=["date", "close"]), ""
    return bars.reset_index(drop=True), source


def _episode(ticker: str, bars: pd.DataFrame, inception: date, source: str, settings: Settings) -> Episode:
    cols = ["date", "open", "high", "low", "close", "adj_close", "volume"]
    cut = int(bars["date"].searchsorted(pd.Timestamp(inception)))
    return Episode(
        key=f"{ticker}|{inception.replace(day=1).isoformat()}",
        ticker=ticker,
        window_start=inception,
        window_end=pd.Timestamp(bars["date"].iloc[-1]).date() + timedelta(days=1),
        bars=bars[cols].iloc[cut:].reset_index(drop=True),
        history=bars[cols].iloc[:cut].reset_index(drop=True),
        starting_cash=float(settings.starting_cash),
        source=source,
    )


@dataclass(frozen=True)
class Account:
    """A paper account after the trade at the decision day's close."""

    ticker: str
    policy: str
    shares: int
    cash: float
    traded: int
    """Shares bought (+) or sold (−) at that close."""
    close: float


def _play(name: str, envs: list[TradingEnv], settings: Settings) -> list[Account]:
    """Every environment played from its start by policy ``name`` (every environment's step t in
    one call when the policy offers a batch decider), and each account after its last trade."""
    decide = make_batch_decider(name, envs, [SEED] * len(envs), settings)
    policies = None if decide is not None else [make_policy(name, env, SEED, settings) for env in envs]
    observations = [env.reset() for env in envs]
    held_before = [0] * len(envs)
    while live := [i for i, env in enumerate(envs) if not env.done]:
        seen = [observations[i] for i in live]
        if decide is not None:
            actions = decide(live, seen)
        else:
            actions = [policies[i].act(o) for i, o in zip(live, seen, strict=True)]
        for i, action in zip(live, actions, strict=True):
            held_before[i] = envs[i].portfolio.position
            observations[i] = envs[i].step(action).observation
    return [
        Account(
            env.episode.ticker,
            name,
            env.portfolio.position,
            env.portfolio.cash,
            env.portfolio.position - before,
            float(env.closes[-1]),
        )
        for env, before in zip(envs, held_before, strict=True)
    ]


def _versions(settings: Settings, policies: Sequence[str]) -> dict[str, str]:
    from stocker_core.evaluation.looks import RULES, model_versions

    if not settings.warehouse_path.exists():
        return dict.fromkeys(policies, RULES)
    return model_versions(Warehouse(settings.warehouse_path), policies)


def _inputs_hash(bars: pd.DataFrame, inception: date, params: RewardParams) -> str:
    seen = {"bars": frame_version(bars), "inception": inception.isoformat(), "params": params.__dict__}
    return hashlib.sha256(json.dumps(seen, sort_keys=True, default=str).encode()).hexdigest()


def _draft(account: Account, plan: SessionPlan, version: str, inputs: str, source: str, cost: float) -> dict:
    """The entry fields of an account after the trade at the decision close."""
    after = account.cash + account.shares * account.close
    paid = cost * abs(account.traded) * account.close
    before = after + paid
    return {
        "ticker": account.ticker,
        "policy": account.policy,
        "decided_on": plan.decided_on.isoformat(),
        "for_session": plan.for_session.isoformat(),
        "target_exposure": account.shares * account.close / after if after > 0 else 0.0,
        "shares": account.shares,
        "decision_close": account.close,
        "cost_fraction": paid / before if before > 0 else 0.0,
        "model_version": version,
        "inputs_hash": inputs,
        "recorded_at": plan.instant.isoformat(),
        "mode": plan.mode,
        "source": source,
    }


def _decision_bars(
    settings: Settings, plan: SessionPlan, tickers: Sequence[str], result: RecordResult
) -> dict[str, tuple[pd.DataFrame, str]]:
    """Each ticker's bars up to the decision day and their source; LedgerRefusedError as soon as
    one has the outcome session's bar; tickers without the decision day's bar go to ``skipped``."""
    data: dict[str, tuple[pd.DataFrame, str]] = {}
    for ticker in tickers:
        where = outcome_exists(settings, ticker, plan.for_session)
        if where is not None:
            raise LedgerRefusedError(
                f"refused: {ticker}'s bar of {plan.for_session} exists already (in the {where}): "
                f"a decision is never recorded once its outcome is knowable; nothing written"
            )
        bars, source = _bars_until(settings, ticker, plan.decided_on)
        last = pd.Timestamp(bars["date"].iloc[-1]).date() if len(bars) else None
        if last != plan.decided_on:
            result.skipped[ticker] = (
                f"no bar of {plan.decided_on} (last: {last})" if last else "no bar before the clock"
            )
            continue
        data[ticker] = (bars, source)
    if not data:
        reasons = "; ".join(f"{t}: {why}" for t, why in result.skipped.items())
        raise LedgerInputError(
            f"no ticker of the universe has a bar of {plan.decided_on}, the decision day at clock "
            f"{plan.instant.isoformat()} ({reasons})"
        )
    return data


@dataclass
class _Draft:
    """What a recording would write on top of the stored chain ``on``."""

    on: Head
    entries: list[LedgerEntry]


def _prepare(
    settings: Settings,
    plan: SessionPlan,
    names: list[str],
    tickers: list[str],
    stored: list[LedgerEntry],
    result: RecordResult,
) -> _Draft:
    """The entries to write after ``stored`` (raising the refusals; writing nothing)."""
    mine = [e for e in stored if e.mode == plan.mode]  # each mode keeps its own paper accounts
    latest = max((e.decided_on for e in mine), default=None)
    if latest is not None and plan.decided_on.isoformat() < latest:
        raise LedgerInputError(
            f"the {plan.mode} entries reach decisions of {latest}: recording at {plan.decided_on} "
            "would back-fill the ledger (move the clock forward)"
        )
    inception: dict[tuple[str, str], date] = {}
    for e in mine:
        inception.setdefault((e.ticker, e.policy), date.fromisoformat(e.decided_on))
    have = {(e.ticker, e.policy): e for e in mine if e.for_session == plan.for_session.isoformat()}
    wanted = [(t, p) for t in tickers for p in names]
    result.already = [have[k] for k in wanted if k in have]
    result.skipped = {}
    last = stored[-1] if stored else None
    on = Head(last.seq, last.hash) if last else Head(0, GENESIS)
    todo = [k for k in wanted if k not in have]
    if not todo:
        return _Draft(on, [])
    data = _decision_bars(settings, plan, list(dict.fromkeys(t for t, _ in todo)), result)
    params = RewardParams.from_settings(settings)
    versions = _versions(settings, names)
    drafts = []
    for name in names:
        tickers_here = [t for t, p in todo if p == name and t in data]
        starts = {t: inception.get((t, name), plan.decided_on) for t in tickers_here}
        envs = [
            TradingEnv(_episode(t, data[t][0], starts[t], data[t][1], settings), params) for t in tickers_here
        ]
        for ticker, account in zip(tickers_here, _play(name, envs, settings), strict=True):
            inputs = _inputs_hash(data[ticker][0], starts[ticker], params)
            drafts.append(
                _draft(account, plan, versions[name], inputs, data[ticker][1], params.transaction_cost)
            )
    drafts.sort(key=lambda d: (d["ticker"], names.index(d["policy"])))
    return _Draft(on, chain(drafts, on.entries + 1, on.hash))


def _stored(settings: Settings, store: LedgerStore, locked: bool = False) -> Ledger:
    """The stored ledger, which a recording may continue: ``verify`` passes on it (derived
    tables included; the bars on the first read, outside the lock), or the only problem is a
    recording interrupted before it moved ``HEAD`` that the evidence confirms (which this one
    finishes)."""
    ledger = read_ledger(store, locked=locked)
    try:
        refuse_unless_verified(settings, ledger, bars=not locked, finishes="recording")
    except LedgerIntegrityError as exc:
        raise LedgerIntegrityError(f"{exc}; nothing recorded") from None
    return ledger


def record(
    settings: Settings, policies: Sequence[str] | None = None, for_session: date | None = None
) -> RecordResult:
    """Record each universe ticker × policy's decision for the next session (see the module
    docstring). LedgerInputError/InvalidNameError for bad input, LedgerRefusedError when the
    session's bar exists, LedgerIntegrityError when the stored chain fails verification; on any
    error nothing is written (not even the ledger's folder).

    The decisions are prepared from the stored chain without writing; only then is the ledger
    locked (its folder made), the chain read again (prepared afresh if another recording wrote
    meanwhile), a recording interrupted between its file and ``HEAD`` finished, the new file
    written and ``HEAD`` moved."""
    names = check_policies(policies if policies is not None else settings.ledger_policies)
    plan = plan_session(settings, for_session)
    store = LedgerStore(settings)
    store.check_writable()
    tickers = read_universe(settings)
    result = RecordResult(plan)
    ledger = _stored(settings, store)
    draft = _prepare(settings, plan, names, tickers, ledger.entries, result)
    if not draft.entries and not ledger.unfinished:
        return result
    with store.locked():
        again = _stored(settings, store, locked=True)
        if again.end != ledger.end or again.files != ledger.files:
            draft = _prepare(settings, plan, names, tickers, again.entries, result)
        ledger = again
        store.remove_temporaries()
        if ledger.unfinished:
            store.set_head(ledger.end)
            result.finished = ledger.end
        files = list(ledger.files)
        if draft.entries:
            files.append(store.write_entry_file(draft.entries))
            store.set_head(Head(draft.entries[-1].seq, draft.entries[-1].hash))
            result.written = draft.entries
        if result.finished or result.written:
            store.refresh_views(files, ledger.scored, ledger.digests)
    return result
