"""``stocker ledger record|score|verify|head|show|export``: the forward paper-trading ledger."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stocker_core.cli_support import EXIT_FAILED, fail

if TYPE_CHECKING:
    import pandas as pd

    from stocker_core.config import Settings


ledger_app = typer.Typer(
    help="The forward ledger: decisions recorded, hash-chained, before their outcome exists.",
    no_args_is_help=True,
)

commands = typer.Typer()
"""What this area adds to ``stocker``: the ``ledger`` group."""
commands.add_typer(ledger_app, name="ledger")


def _settings() -> Settings:
    """The settings in force; a bad ``STOCKER_*`` value (e.g. a clock without a zone) is exit 2."""
    from stocker_core.config import SettingsError, get_settings

    try:
        return get_settings()
    except SettingsError as exc:
        fail(exc)


def _session(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        fail(f"--for {text!r}: use an ISO date, e.g. 2016-03-02")


def _published_heads(texts: list[str] | None) -> tuple:
    """Each ``--head ENTRIES:HASH`` as a Head; exit 2 naming the expected form otherwise."""
    from stocker_core.ledger.store import published_head

    heads = []
    for text in texts or []:
        try:
            heads.append(published_head(text))
        except ValueError as exc:
            fail(f"--head {exc}")
    return tuple(heads)


def _percent(value: object) -> str:
    if value is None or value != value:  # None or NaN
        return "–"
    return f"{float(value) * 100:+.3f}%"


def _record_lines(record: pd.DataFrame) -> list[str]:
    """The forward record as aligned lines, live and replayed apart."""
    if len(record) == 0:
        return ["no scored entries yet"]
    lines = []
    for mode, rows in record.groupby("mode", sort=True):
        lines.append(f"{mode}:")
        lines.append(
            f"  {'policy':<16} {'days':>5} {'cum. return':>12} {'excess':>10} "
            f"{'mean/day':>10} {'95% CI':>22} {'p':>6} {'MDE/day':>9}"
        )
        for r in rows.itertuples(index=False):
            ci = (
                f"[{_percent(r.ci_low)}, {_percent(r.ci_high)}]"
                if r.ci_low == r.ci_low and r.ci_low is not None
                else "–"
            )
            p = f"{r.p_value:.3f}" if r.p_value is not None and r.p_value == r.p_value else "–"
            lines.append(
                f"  {r.policy:<16} {r.days:>5} {_percent(r.cumulative_return):>12} "
                f"{_percent(r.excess_cumulative):>10} {_percent(r.mean_daily_excess):>10} {ci:>22} {p:>6} "
                f"{_percent(r.min_detectable_edge):>9}"
            )
    return lines


@ledger_app.command("record")
def record_command(
    policies: str | None = typer.Option(
        None, "--policies", help="Comma-separated (default: STOCKER_LEDGER_POLICIES); buy_and_hold always"
    ),
    for_session: str | None = typer.Option(
        None, "--for", help="The session decided for (default: the one after the clock's last closed one)"
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Record each ticker × policy's decision for the next session (exit 1 if its bar exists)."""
    from stocker_core.errors import StockerError
    from stocker_core.ledger.entries import to_jsonl
    from stocker_core.ledger.record import LedgerRefusedError, record
    from stocker_core.ledger.store import LedgerIntegrityError

    settings = _settings()
    names = [p for p in policies.split(",")] if policies is not None else None
    try:
        result = record(settings, names, _session(for_session))
    except (LedgerRefusedError, LedgerIntegrityError) as exc:
        fail(exc, EXIT_FAILED)
    except StockerError as exc:
        fail(exc)
    plan = result.plan
    if result.finished and not as_json:
        typer.echo(
            f"finished an interrupted recording: HEAD moved to #{result.finished.entries}, the end of "
            "the file it had written"
        )
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "decided_on": plan.decided_on.isoformat(),
                    "for_session": plan.for_session.isoformat(),
                    "mode": plan.mode,
                    "written": [json.loads(line) for line in to_jsonl(result.written).splitlines()],
                    "already_recorded": len(result.already),
                    "skipped": result.skipped,
                    "finished": result.finished.text() if result.finished else None,
                },
                indent=2,
            )
        )
        return
    typer.echo(
        f"{len(result.written)} entries recorded ({plan.mode}) at {plan.instant.isoformat()}: decided at "
        f"{plan.decided_on}'s close for {plan.for_session}"
        + (f"; {len(result.already)} were recorded already" if result.already else "")
    )
    for e in result.written:
        typer.echo(f"  #{e.seq:<5} {e.ticker:<6} {e.policy:<16} exposure {e.target_exposure:.3f}")
    for ticker, why in result.skipped.items():
        typer.echo(f"  left out {ticker}: {why}")


@ledger_app.command("score")
def score_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    recompute: bool = typer.Option(
        False,
        "--recompute",
        help="Write over scores and record that fail verification (never over ones computed "
        "from another chain)",
    ),
) -> None:
    """Score every entry whose outcome bar has landed; store and print the forward record.

    Refused (exit 1, nothing written) whenever `verify` fails, the scores and record included;
    --recompute rewrites those two from the verified chain and the bars, saying what it discarded."""
    from stocker_core.errors import StockerError
    from stocker_core.ledger.service import score_ledger
    from stocker_core.ledger.store import LedgerIntegrityError

    try:
        scored = score_ledger(_settings(), recompute)
    except LedgerIntegrityError as exc:
        fail(f"{exc}; nothing scored", EXIT_FAILED)
    except StockerError as exc:
        fail(exc)
    if scored.discarded:
        typer.echo(
            f"recomputed the scores and record, which failed verification: {scored.discarded}", err=True
        )
    if as_json:
        payload = {
            "scored": len(scored.scores),
            "pending": scored.pending,
            "record": json.loads(scored.record.to_json(orient="records")),
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    typer.echo(f"{len(scored.scores)} entries scored, {scored.pending} pending")
    for line in _record_lines(scored.record):
        typer.echo(line)


@ledger_app.command("verify")
def verify_command(
    file: Path | None = typer.Option(None, "--file", help="Verify a JSON Lines export instead of the store"),
    heads: list[str] | None = typer.Option(
        None,
        "--head",
        help="A head published earlier, ENTRIES:HASH (`stocker ledger head` prints it): the chain "
        "must pass through it (repeatable)",
    ),
) -> None:
    """Re-hash the chain, check HEAD, every file and the scores; exit 1 naming the first problem.

    What it proves: the stored files agree with each other (and the scores with the bars). Only a
    head published elsewhere (--head) proves nothing up to it was rewritten since."""
    from stocker_core.ledger.entries import from_jsonl
    from stocker_core.ledger.files import LedgerFileError, read_export
    from stocker_core.ledger.service import verify_ledger
    from stocker_core.ledger.verify import verify_chain

    published = _published_heads(heads)
    if file is not None:
        try:
            text = read_export(file).decode("utf-8")
        except (OSError, LedgerFileError) as exc:
            fail(f"cannot read {file}: {getattr(exc, 'strerror', None) or exc}")
        except UnicodeDecodeError:
            fail(f"{file}: not a ledger export (not UTF-8 text)", EXIT_FAILED)
        try:
            entries = from_jsonl(text, str(file))
        except ValueError as exc:
            fail(exc, EXIT_FAILED)
        report = verify_chain(entries, None, published)
    else:
        report = verify_ledger(_settings(), published)
    if not report.ok:
        more = len(report.problems) - 1
        fail(f"{report.first_problem}" + (f" (and {more} more problem(s))" if more else ""), EXIT_FAILED)
    checked = "; ".join(report.notes)
    if file is not None:
        typer.echo(
            f"export intact: {report.entries} entries, chain verified, none after its outcome"
            + (
                f"; {checked}"
                if checked
                else "; no head checked (pass --head ENTRIES:HASH as published: entries removed at the "
                "end would not show without it)"
            )
        )
        return
    typer.echo(
        f"ledger intact: {report.entries} entries, chain and HEAD verified, none after its outcome; "
        f"{checked} (the files agree with each other; only a head published elsewhere shows they "
        "were not all rewritten)"
    )


@ledger_app.command("head")
def head_command(as_json: bool = typer.Option(False, "--json", help="Print JSON")) -> None:
    """Print the verified chain's head, ENTRIES:HASH: publish it (a commit, a dated post) to
    anchor the ledger; `verify --head` checks any later ledger against it."""
    from stocker_core.ledger.service import read_verified
    from stocker_core.ledger.store import LedgerIntegrityError

    try:
        ledger = read_verified(_settings())
    except LedgerIntegrityError as exc:
        fail(f"{exc}; no head to publish", EXIT_FAILED)
    if not ledger.entries:
        fail(
            "the ledger is empty: no head to publish (`stocker ledger record` writes its first entries)",
            EXIT_FAILED,
        )
    if as_json:
        typer.echo(json.dumps({"entries": ledger.end.entries, "hash": ledger.end.hash}))
        return
    typer.echo(ledger.end.text())


@ledger_app.command("show")
def show_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON: head, entries and the forward record"),
    last: int = typer.Option(10, "--last", min=0, max=1_000_000, help="Entries to list (text output)"),
) -> None:
    """The ledger: its head, the last entries and the stored forward record, once they pass
    everything `verify` checks (exit 1 naming the first problem otherwise)."""
    from stocker_core.ledger.entries import to_jsonl
    from stocker_core.ledger.reader import check_outcomes, read_ledger
    from stocker_core.ledger.store import LedgerStore

    settings = _settings()
    ledger = read_ledger(LedgerStore(settings))
    problems = ledger.all_problems or check_outcomes(settings, ledger)  # what verify checks
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        fail(f"the ledger fails verification, nothing shown: {problems[0]}{more}", EXIT_FAILED)
    entries, record = ledger.entries, ledger.record
    head = ledger.end if entries else None
    if as_json:
        payload = {
            "head": {"entries": head.entries, "hash": head.hash} if head else None,
            "entries": [json.loads(line) for line in to_jsonl(entries).splitlines()],
            "record": json.loads(record.to_json(orient="records")) if len(record) else [],
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    if not entries:
        typer.echo("the ledger is empty: `stocker ledger record` writes its first entries")
        return
    typer.echo(f"{len(entries)} entries; head {head.text()}")
    for e in entries[-last:] if last else []:
        typer.echo(
            f"  #{e.seq:<5} {e.mode:<8} {e.decided_on} → {e.for_session} {e.ticker:<6} {e.policy:<16} "
            f"exposure {e.target_exposure:.3f}  recorded {e.recorded_at}"
        )
    for line in _record_lines(record):
        typer.echo(line)


@ledger_app.command("export")
def export_command(
    output: Path | None = typer.Option(None, "-o", "--output", help="File to write (default: stdout)"),
) -> None:
    """Every entry as JSON Lines, exactly as hashed (publish it with `stocker ledger head`)."""
    from stocker_core.atomic_files import write_text_atomic
    from stocker_core.ledger.entries import to_jsonl
    from stocker_core.ledger.service import read_verified
    from stocker_core.ledger.store import LedgerIntegrityError

    try:
        ledger = read_verified(_settings())
    except LedgerIntegrityError as exc:
        fail(f"{exc}; nothing exported", EXIT_FAILED)
    text = to_jsonl(ledger.entries)
    if output is None:
        sys.stdout.write(text)
        return
    try:
        write_text_atomic(output, text)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    typer.echo(f"wrote {text.count(chr(10))} entries to {output}")
