"""The one reader of the stored ledger: ``verify``, ``show``, ``head``, ``export``, ``score``,
``record`` and the web page read the ledger through ``read_ledger``, so what any of them shows
is what verification checked.

``read_ledger`` reads the entry files the ledger writes (and names every other file under
``entries/`` as a problem: no one reads it), each value exactly as stored and of the type the
ledger writes, re-hashes the chain, matches ``HEAD``, and checks the derived tables against the
chain: ``SCORED`` (what they were computed from) must name a prefix of the chain, each file must
have the sha256 ``SCORED`` records, every scored row must repeat its entry's fields and the
return arithmetic exactly, and the forward record must be the one its scores give.
``check_outcomes`` adds what needs the market data: every outcome close is the bar's close, and
every entry due at the scoring with a bar is scored (``verify`` runs it).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from stocker_core.config import Settings
from stocker_core.ledger.entries import BENCHMARK, ENTRY_FIELDS_IN_SCORES, GENESIS, LedgerEntry
from stocker_core.ledger.store import DERIVED, Head, LedgerIntegrityError, LedgerStore, Scored
from stocker_core.ledger.verify import verify_chain
from stocker_core.market.clock import close_of


@dataclass
class Ledger:
    """The stored ledger as the reader found it."""

    entries: list[LedgerEntry]
    """Every entry read from the accepted files, in ``seq`` order."""
    files: list[Path]
    head: Head | None
    """``HEAD`` as stored (None when missing or unreadable)."""
    end: Head
    """The chain's last entry, as checked."""
    problems: list[str] = field(default_factory=list)
    """The chain's problems: files, values, hashes, links, numbering, timing, ``HEAD``."""
    derived_problems: list[str] = field(default_factory=list)
    """The derived tables' problems (scores, record, ``SCORED``)."""
    unfinished: bool = False
    """The only problem is a recording interrupted between its file and ``HEAD``, and the
    derived tables agree (``SCORED`` scored no entry after ``HEAD``): the next recording moves
    ``HEAD`` to ``end``."""
    scoring_unfinished: bool = False
    """The only derived problem is a scoring interrupted between its tables and ``SCORED`` (each
    table is the one ``SCORED`` or ``SCORED.next`` records): the next scoring rewrites them."""
    scored_elsewhere: str | None = None
    """Why the derived tables were computed from another chain than this one (``SCORED`` or a
    scored row past its end, or off it): evidence of deleted or rewritten entries, which no
    scoring writes over."""
    digests: dict[Path, str] = field(default_factory=dict)
    """The sha256 of each entry file as read and checked."""
    scored: Scored | None = None
    scores: pd.DataFrame = field(default_factory=pd.DataFrame)
    record: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.derived_problems

    @property
    def all_problems(self) -> list[str]:
        return [*self.problems, *self.derived_problems]

    def summary(self) -> str:
        """The first problem, with how many more there are."""
        problems = self.all_problems
        more = len(problems) - 1
        return problems[0] + (
            f" (and {more} more problem(s): `stocker ledger verify` lists them)" if more else ""
        )


def read_ledger(store: LedgerStore, published: tuple[Head, ...] = (), *, locked: bool = False) -> Ledger:
    """The stored ledger, checked (see the module docstring); ``published`` heads must be
    prefixes of the chain. Read under the ledger's shared lock (``locked``: the caller holds the
    exclusive one already)."""
    if locked:
        return _read(store, published)
    with store.reading():
        return _read(store, published)


def read_entries(store: LedgerStore) -> list[LedgerEntry]:
    """Every entry of the chain, once ``read_ledger`` verified it (LedgerIntegrityError naming
    the first problem otherwise)."""
    ledger = read_ledger(store)
    if ledger.problems:
        raise LedgerIntegrityError(f"the ledger fails verification: {ledger.summary()}")
    return ledger.entries


def _read(store: LedgerStore, published: tuple[Head, ...]) -> Ledger:
    files, problems = store.scan()
    entries: list[LedgerEntry] = []
    misnamed: list[str] = []
    digests: dict[Path, str] = {}
    for path in files:
        found, wrong, digest = store.read_entry_file(path)
        entries += found
        problems += wrong
        misnamed += store.naming_problems(path, found)
        if digest is not None:
            digests[path] = digest
    entries.sort(key=lambda e: e.seq)
    head, head_problem = store.read_head()
    if head_problem:
        problems.append(head_problem)
    report = verify_chain(entries, head, published)
    ledger = Ledger(entries, files, head, report.end, notes=report.notes, digests=digests)
    _read_derived(store, ledger)
    unfinished = _unfinished(files, entries, head) if not problems and not misnamed else False
    contradicted = _scored_past_head(ledger, head) if unfinished else None
    if unfinished and not contradicted and head is None and store.views_defined():
        contradicted = (
            "HEAD is missing, yet stocker.duckdb's ledger views were defined by a recording that moved "
            "it: HEAD was deleted (with entries after it?), not left behind by an interrupted first "
            "recording (compare with the head you published)"
        )
    if head is None and head_problem is None and entries:
        problems.append(
            f"HEAD is missing: the chain's end (#{report.end.entries}) cannot be checked against it "
            "(entries deleted at the end would not show)"
            + (
                "; a first recording interrupted before writing it? `stocker ledger record` finishes it"
                if unfinished and not contradicted and not ledger.derived_problems
                else ""
            )
        )
    problems += report.problems + misnamed
    if contradicted:
        problems.insert(0, contradicted)  # the evidence first: it says what happened
    ledger.problems = problems
    ledger.unfinished = unfinished and len(problems) == 1 and not ledger.derived_problems
    return ledger


def _scored_past_head(ledger: Ledger, head: Head | None) -> str | None:
    """Why the evidence contradicts "a recording interrupted before it moved ``HEAD``": a scoring
    runs only on a chain that ends at ``HEAD``, so ``SCORED`` (or the scores) reaching past
    ``HEAD`` — past the chain's start when ``HEAD`` is missing — says ``HEAD`` was deleted or
    moved back, not left behind. None when nothing contradicts it."""
    boundary = head.entries if head is not None else 0
    scored = ledger.scored
    reached = scored.head.entries if scored is not None else 0
    if reached <= boundary:
        return None
    where = f"HEAD (#{boundary})" if head is not None else "a missing HEAD"
    return (
        f"SCORED says the chain was scored up to #{reached}, past {where}: entries after "
        f"#{boundary} were scored, so HEAD was deleted or moved back, not left behind by an "
        "interrupted recording (compare with the head you published)"
    )


def _unfinished(files: list[Path], entries: list[LedgerEntry], head: Head | None) -> bool:
    """Whether the chain is whole and only its last file lies after ``HEAD`` (or, without
    ``HEAD``, it is the only file): a recording killed between its file and moving ``HEAD``."""
    if not files or not entries:
        return False
    boundary = head.entries if head is not None else 0
    last_first = int(files[-1].name.split("-")[1].split(".")[0])
    if last_first != boundary + 1 or entries[-1].seq <= boundary:
        return False
    whole = verify_chain(entries)
    if not whole.ok:
        return False
    at_boundary = GENESIS if boundary == 0 else next((e.hash for e in entries if e.seq == boundary), None)
    return head is None or at_boundary == head.hash


# -- the derived tables -------------------------------------------------------------------
def _read_derived(store: LedgerStore, ledger: Ledger) -> None:
    """The derived tables' problems (``ledger.derived_problems``); a scoring interrupted between
    its tables and ``SCORED`` is one named problem, which the next scoring finishes."""
    digests = _check_derived(store, ledger)
    if not ledger.derived_problems:
        return
    intent, _ = store.read_scored(store.scoring_path)
    if intent is None or digests is None or ledger.scored_elsewhere or not _is_prefix(ledger, intent.head):
        return
    before = ledger.scored.digests if ledger.scored is not None else {}
    kept_or_new = all(digests[n] in (before.get(n), intent.digests[n]) for n in DERIVED)
    if kept_or_new and any(digests[n] != before.get(n) for n in DERIVED):
        ledger.derived_problems = [
            "scores/part.parquet, record/part.parquet: a scoring interrupted before it wrote SCORED "
            "(`stocker ledger score` finishes it)"
        ]
        ledger.scoring_unfinished = True


def _present(path: Path) -> bool:
    """Whether a derived table is there to be checked: its file, or something other than a
    folder where its folder belongs (a link, a file)."""
    folder = path.parent
    return os.path.lexists(path) or (os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()))


def _scored_row_past_the_chain(ledger: Ledger, scores: pa.Table | None) -> str | None:
    """A problem when ``scores`` holds a row numbered past the chain's end (the entry it scored
    is gone), else None."""
    if scores is None or "seq" not in scores.column_names:
        return None
    numbers = [n for n in scores.column("seq").to_pylist() if isinstance(n, int)]
    if not numbers or max(numbers) <= ledger.end.entries:
        return None
    return (
        f"scores/part.parquet scores entry #{max(numbers)}, past the chain's end (#{ledger.end.entries}): "
        "entries deleted at the end"
    )


def _is_prefix(ledger: Ledger, head: Head) -> bool:
    """Whether ``head`` is the chain's state after ``head.entries`` entries."""
    if head.entries == 0:
        return head.hash == GENESIS
    hashes = {e.seq: e.hash for e in ledger.entries}
    return head.entries <= ledger.end.entries and hashes.get(head.entries) == head.hash


def _check_derived(store: LedgerStore, ledger: Ledger) -> dict[str, str] | None:
    """Check the derived tables against ``SCORED`` and the chain; the sha256 of each table as
    read (None when one could not be read)."""
    scored, problem = store.read_scored()
    present = [n for n in DERIVED if _present(store.table_path(n))]
    problems = ledger.derived_problems
    digests: dict[str, str] = {}
    tables: dict[str, pa.Table] = {}
    for name in present:
        table, digest, unreadable = store.read_derived(name)
        if unreadable:
            problems.append(unreadable)
            continue
        tables[name], digests[name] = table, digest  # type: ignore[assignment]
    ledger.scored_elsewhere = _scored_row_past_the_chain(ledger, tables.get("scores"))
    if problems:
        return None
    if problem:
        problems.append(problem)
        return digests
    if scored is None:
        if present:
            problems.append(
                f"{present[0]}/part.parquet has no SCORED beside it (what it was computed from is unknown)"
            )
        return digests
    ledger.scored = scored
    n = scored.head.entries
    if not _is_prefix(ledger, scored.head):
        problems.append(
            f"SCORED says the scores were computed from the chain up to #{n} ({scored.head.hash[:12]}…), "
            f"which is not this chain's (it ends at #{ledger.end.entries}): entries deleted or rewritten, "
            "or SCORED edited"
        )
        ledger.scored_elsewhere = problems[-1]
        return digests
    missing = [n for n in DERIVED if n not in tables]
    if missing:
        problems.append(f"{missing[0]}/part.parquet: missing, yet SCORED records it")
        return digests
    try:
        _check_contents(ledger, tables, scored)
    except (TypeError, ValueError, OverflowError, ArithmeticError, KeyError) as exc:
        problems.append(f"scores/part.parquet or record/part.parquet: not what the ledger writes ({exc})")
    for name in DERIVED:
        if digests[name] != scored.digests[name]:
            problems.append(
                f"{name}/part.parquet changed since `stocker ledger score` wrote it (its sha256 is not "
                "the one SCORED records)"
            )
    return digests


def _check_contents(ledger: Ledger, tables: dict[str, pa.Table], scored: Scored) -> None:
    """The derived tables' columns, every scored row against its entry, the record against its
    scores (problems go to ``ledger.derived_problems``; the frames to ``ledger``)."""
    from stocker_core.ledger.score import RECORD_COLUMNS, SCORE_COLUMNS

    problems = ledger.derived_problems
    n = scored.head.entries
    shapes = [
        _shape_problem(f"{name}/part.parquet", tables[name], columns)
        for name, columns in (("scores", SCORE_COLUMNS), ("record", RECORD_COLUMNS))
    ]
    problems += [p for p in shapes if p]
    if not any(shapes):
        scores = tables["scores"].to_pandas()
        record = tables["record"].to_pandas()
        by_seq = {e.seq: e for e in ledger.entries if e.seq <= n}
        problems += _scores_problems(tables["scores"].to_pylist(), by_seq, scored.at)
        if not problems:
            problems += _record_problems(record, scores)
        ledger.scores, ledger.record = scores, record


def _shape_problem(where: str, table: pa.Table, columns: tuple[str, ...]) -> str | None:
    names = table.column_names
    missing = [c for c in columns if c not in names]
    if missing:
        return f"{where}: column {missing[0]} is missing"
    extra = [c for c in names if c not in columns]
    if extra or len(set(names)) != len(names):
        return f"{where}: column {(extra or names)[0]!r} is not one the ledger writes"
    return None


def _same(a: Any, b: Any) -> bool:
    """Equal values, or both missing (None or NaN)."""
    missing_a = a is None or (isinstance(a, float) and math.isnan(a))
    missing_b = b is None or (isinstance(b, float) and math.isnan(b))
    if missing_a or missing_b:
        return missing_a and missing_b
    return (
        type(a) is type(b)
        and a == b
        or (
            isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and a == b
        )
    )


def _percent(value: Any) -> str:
    return f"{value * 100:+.3f}%" if isinstance(value, float) and math.isfinite(value) else repr(value)


def _scores_problems(
    rows: list[dict[str, Any]], by_seq: dict[int, LedgerEntry], at: pd.Timestamp
) -> list[str]:
    """Every scored row against its entry, the return arithmetic and buy-and-hold's row."""
    from stocker_core.ledger.score import entry_return

    problems: list[str] = []
    seen: set[int] = set()
    bench: dict[tuple[str, str, str], Any] = {}
    for row in rows:
        if row.get("policy") == BENCHMARK:
            bench[(row.get("ticker"), row.get("mode"), row.get("for_session"))] = row.get("policy_return")
    for row in rows:
        seq = row.get("seq")
        entry = by_seq.get(seq) if isinstance(seq, int) and not isinstance(seq, bool) else None
        if entry is None:
            problems.append(
                f"scores/part.parquet: row #{seq!r} scores no entry of the chain it was computed from"
            )
            continue
        who = f"scores/part.parquet: row {entry.describe()}"
        if seq in seen:
            problems.append(f"{who} appears twice")
            continue
        seen.add(seq)
        wrong = [c for c in ENTRY_FIELDS_IN_SCORES if not _same(row.get(c), getattr(entry, c))]
        if wrong:
            problems.append(
                f"{who}: its {wrong[0]} is {row.get(wrong[0])!r}, the entry's is {getattr(entry, wrong[0])!r}"
            )
            continue
        try:
            due = close_of(date.fromisoformat(entry.for_session)) <= at
        except (ValueError, OverflowError):
            due = False
        if not due:
            problems.append(f"{who}: scored at {at.isoformat()}, before its outcome bar's close")
            continue
        outcome = row.get("outcome_close")
        if not isinstance(outcome, float) or not math.isfinite(outcome) or outcome <= 0:
            problems.append(f"{who}: outcome close {outcome!r} is not a price")
            continue
        expected = {
            "session_return": outcome / entry.decision_close - 1.0,
            "policy_return": entry_return(
                entry.target_exposure, entry.cost_fraction, entry.decision_close, outcome
            ),
        }
        benchmark = bench.get((entry.ticker, entry.mode, entry.for_session))
        expected["benchmark_return"] = benchmark if benchmark is not None else float("nan")
        expected["excess"] = expected["policy_return"] - expected["benchmark_return"]
        for column, value in expected.items():
            if not _same(row.get(column), value):
                problems.append(
                    f"{who}: its {column} is {_percent(row.get(column))}, the entry and its outcome close "
                    f"give {_percent(value)}"
                )
                break
    return problems


def _record_problems(record: pd.DataFrame, scores: pd.DataFrame) -> list[str]:
    """The stored forward record against the one its scores give."""
    from stocker_core.ledger.score import RECORD_COLUMNS, forward_record

    expected = forward_record(scores)
    if len(expected) != len(record):
        return [
            f"record/part.parquet: {len(record)} rows, its scores give {len(expected)} "
            "(one per mode and policy)"
        ]
    got_rows = record.sort_values(["mode", "policy"]).to_dict("records")
    want_rows = expected.sort_values(["mode", "policy"]).to_dict("records")
    for got, want in zip(got_rows, want_rows, strict=True):
        for column in RECORD_COLUMNS:
            if not _same(_plain(got[column]), _plain(want[column])):
                return [
                    f"record/part.parquet: {want['mode']} {want['policy']}'s {column} is "
                    f"{_plain(got[column])!r}, its scores give {_plain(want[column])!r}"
                ]
    return []


def _plain(value: Any) -> Any:
    """A pandas/NumPy cell as a Python value (ints as int, floats as float, missing as None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


# -- what needs the market data -----------------------------------------------------------
def check_outcomes(settings: Settings, ledger: Ledger) -> list[str]:
    """The stored scores against a fresh scoring of the same chain prefix at the same instant
    (``SCORED``): each outcome close is the bar's, each entry due then whose bar exists is
    scored. Nothing to check (empty) when there are no scores or they already fail."""
    from stocker_core.errors import StockerError
    from stocker_core.ledger.score import score_entries

    scored = ledger.scored
    if scored is None or ledger.derived_problems or ledger.scores.empty and scored.head.entries == 0:
        return []
    entries = [e for e in ledger.entries if e.seq <= scored.head.entries]
    at_scoring = settings
    if settings.clock is not None and settings.clock < scored.at:
        at_scoring = settings.model_copy(update={"clock": scored.at.to_pydatetime()})
    try:
        fresh, _ = score_entries(at_scoring, entries, scored.at)
    except (StockerError, OSError) as exc:
        return [f"the scores could not be checked against the bars: {exc}"]
    stored = {int(r["seq"]): r for r in ledger.scores.to_dict("records")}
    again = {int(r["seq"]): r for r in fresh.to_dict("records")}
    by_seq = {e.seq: e for e in entries}
    for seq in sorted(set(stored) | set(again)):
        who = by_seq[seq].describe() if seq in by_seq else f"#{seq}"
        if seq not in again:
            return [f"scores/part.parquet: entry {who} is scored, yet its outcome bar does not exist"]
        if seq not in stored and by_seq[seq].mode == "live":
            continue  # a live bar may have landed after the scoring: the next scoring scores it
        if seq not in stored:
            return [
                f"scores/part.parquet: entry {who} is missing, yet its outcome bar existed when it was "
                f"scored ({scored.at.isoformat()})"
            ]
        kept, bar = _plain(stored[seq]["outcome_close"]), _plain(again[seq]["outcome_close"])
        if not _same(kept, bar):
            return [
                f"scores/part.parquet: entry {who}'s outcome close is {kept!r}, the bar's close is {bar!r}"
            ]
    return []
