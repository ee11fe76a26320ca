"""``stocker ledger record|score|verify|show|export``: the forward paper-trading ledger."""

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


def _published_head(text: str):
    """``ENTRIES:HASH`` as a Head; exit 2 naming the expected form otherwise."""
    from stocker_core.ledger.store import Head

    count, _, digest = text.partition(":")
    if not count.isdigit() or len(digest) != 64:
        fail(f"--head {text!r}: use ENTRIES:HASH, e.g. 240:<64 hex digits> (`stocker ledger show` prints it)")
    return Head(int(count), digest.lower())


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


def register(app: typer.Typer) -> None:
    """Add the ``ledger`` sub-app to ``app``."""
    ledger_app = typer.Typer(
        help="The forward ledger: decisions recorded, hash-chained, before their outcome exists.",
        no_args_is_help=True,
    )

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

        settings = _settings()
        names = [p for p in policies.split(",")] if policies is not None else None
        try:
            result = record(settings, names, _session(for_session))
        except LedgerRefusedError as exc:
            fail(exc, EXIT_FAILED)
        except StockerError as exc:
            fail(exc)
        plan = result.plan
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
    def score_command(as_json: bool = typer.Option(False, "--json", help="Print JSON")) -> None:
        """Score every entry whose outcome bar has landed; store and print the forward record."""
        from stocker_core.errors import StockerError
        from stocker_core.ledger.service import score_ledger

        try:
            scored = score_ledger(_settings())
        except StockerError as exc:
            fail(exc)
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
        file: Path | None = typer.Option(
            None, "--file", help="Verify a JSON Lines export instead of the store"
        ),
        head: str | None = typer.Option(
            None,
            "--head",
            help="With --file: the published head, ENTRIES:HASH (as `stocker ledger show` prints it)",
        ),
    ) -> None:
        """Re-hash the chain; check each entry preceded its outcome (exit 1 naming the first bad one)."""
        from stocker_core.ledger.entries import from_jsonl
        from stocker_core.ledger.service import verify_ledger
        from stocker_core.ledger.verify import verify_chain

        if file is not None:
            try:
                entries = from_jsonl(file.read_text(), str(file))
            except (OSError, ValueError) as exc:
                fail(exc)
            report = verify_chain(entries, _published_head(head) if head else None)
        else:
            if head is not None:
                fail("--head goes with --file (the store keeps its own head)")
            report = verify_ledger(_settings())
        if not report.ok:
            more = len(report.problems) - 1
            fail(f"{report.first_problem}" + (f" (and {more} more problem(s))" if more else ""), EXIT_FAILED)
        typer.echo(
            f"ledger intact: {report.entries} entries, chain and head verified, none after its outcome"
        )

    @ledger_app.command("show")
    def show_command(
        as_json: bool = typer.Option(
            False, "--json", help="Print JSON: head, entries and the forward record"
        ),
        last: int = typer.Option(10, "--last", min=0, help="Entries to list (text output)"),
    ) -> None:
        """The ledger: its head, the last entries and the stored forward record."""
        from stocker_core.ledger.entries import to_jsonl
        from stocker_core.ledger.store import LedgerStore

        store = LedgerStore(_settings())
        entries = store.read()
        head = store.head()
        record = store.read_table("record")
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
        typer.echo(f"{len(entries)} entries; head {f'{head.entries}:{head.hash}' if head else 'missing'}")
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
        """Every entry as JSON Lines, exactly as hashed (publish it with the head hash)."""
        from stocker_core.atomic_files import write_text_atomic
        from stocker_core.ledger.entries import to_jsonl
        from stocker_core.ledger.store import LedgerStore

        text = to_jsonl(LedgerStore(_settings()).read())
        if output is None:
            sys.stdout.write(text)
            return
        try:
            write_text_atomic(output, text)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}")
        typer.echo(f"wrote {text.count(chr(10))} entries to {output}")

    app.add_typer(ledger_app, name="ledger")
