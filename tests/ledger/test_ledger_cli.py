"""``stocker ledger``: tampering is named by verify, a knowable outcome is refused, bad input exits 2."""

from __future__ import annotations

import json
from datetime import date

import pandas as pd
import pytest
from ledger_testing import FIRST_DECISION, after_close, before_open, invoke, set_clock

from stocker_core.config import _cached_settings, get_settings
from stocker_core.ledger.store import LedgerStore
from stocker_core.market.clock import next_session
from stocker_core.market.gate import ingest_prices
from stocker_core.market.source_builder import get_source
from stocker_core.warehouse.db import Warehouse

POLICIES = "buy_and_hold,macd"


def _one_line_error(result, code: int) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def _three_sessions(monkeypatch) -> list[date]:
    """Three recordings (2 policies × AAPL each): entries #1 … #6, decided on three sessions."""
    days = [FIRST_DECISION]
    for _ in range(2):
        days.append(next_session(days[-1]))
    for day in days:
        set_clock(monkeypatch, after_close(day))
        result = invoke("record", "--policies", POLICIES)
        assert result.exit_code == 0, result.output
    return days


def _rewrite(store: LedgerStore, seq: int, change) -> None:
    """Rewrite the stored file holding entry ``seq`` as ``change(frame, row_index)`` returns it."""
    for path in store.entry_files():
        frame = pd.read_parquet(path)
        hit = frame.index[frame["seq"] == seq]
        if len(hit):
            change(frame, hit[0]).to_parquet(path, index=False)
            return
    raise AssertionError(f"no entry #{seq}")


def test_a_clean_ledger_verifies_and_shows(aapl_home, monkeypatch):
    days = _three_sessions(monkeypatch)
    assert invoke("verify").exit_code == 0
    shown = json.loads(invoke("show", "--json").stdout)
    assert [e["seq"] for e in shown["entries"]] == [1, 2, 3, 4, 5, 6]
    assert shown["head"]["entries"] == 6 and shown["head"]["hash"] == shown["entries"][-1]["hash"]
    assert {e["for_session"] for e in shown["entries"]} == {str(next_session(d)) for d in days}
    assert {e["mode"] for e in shown["entries"]} == {"replayed"}
    assert shown["entries"][1]["prev_hash"] == shown["entries"][0]["hash"]


@pytest.mark.parametrize(
    ("seq", "change", "named"),
    [
        (3, lambda f, i: f.assign(target_exposure=f["target_exposure"].where(f.index != i, 0.5)), "#3 "),
        (
            4,
            lambda f, i: f.assign(
                recorded_at=f["recorded_at"].where(f.index != i, "2023-06-01T12:00:00+00:00")
            ),
            "#4 ",
        ),
        (3, lambda f, i: f.drop(index=i), "#3 is missing"),
    ],
    ids=["exposure", "timestamp", "deleted"],
)
def test_any_edit_makes_verify_exit_1_naming_the_entry(aapl_home, monkeypatch, seq, change, named):
    _three_sessions(monkeypatch)
    _rewrite(LedgerStore(get_settings()), seq, change)
    line = _one_line_error(invoke("verify"), 1)
    assert named in line


def test_deleting_the_last_entries_is_caught_by_the_head(aapl_home, monkeypatch):
    _three_sessions(monkeypatch)
    store = LedgerStore(get_settings())
    store.entry_files()[-1].unlink()  # the last recording: entries #5 and #6
    assert "#5 is missing" in _one_line_error(invoke("verify"), 1)


def test_a_published_export_verifies_against_its_head(aapl_home, monkeypatch, tmp_path):
    _three_sessions(monkeypatch)
    exported = tmp_path / "ledger.jsonl"
    assert invoke("export", "-o", str(exported)).exit_code == 0
    head = json.loads(invoke("show", "--json").stdout)["head"]
    published = f"{head['entries']}:{head['hash']}"
    assert invoke("verify", "--file", str(exported), "--head", published).exit_code == 0
    original = exported.read_text().splitlines()
    lines = list(original)
    entry = json.loads(lines[1])
    entry["target_exposure"] = 0.0
    lines[1] = json.dumps(entry, sort_keys=True)
    exported.write_text("\n".join(lines) + "\n")
    assert "#2 AAPL macd" in _one_line_error(invoke("verify", "--file", str(exported)), 1)
    exported.write_text("\n".join(original[:2]) + "\n")  # entries #3 … #6 left out of what is shown
    assert "#3 is missing" in _one_line_error(
        invoke("verify", "--file", str(exported), "--head", published), 1
    )


def test_a_session_whose_bar_exists_is_refused_and_nothing_written(aapl_home, monkeypatch):
    from stocker_core.ledger.record import outcome_exists

    store = LedgerStore(get_settings())
    set_clock(monkeypatch, after_close(FIRST_DECISION))
    line = _one_line_error(invoke("record", "--policies", POLICIES, "--for", str(FIRST_DECISION)), 1)
    assert "refused" in line and str(FIRST_DECISION) in line
    assert not store.root.exists()  # no entry, no HEAD, no .lock, no folder
    # the warehouse holds the next session's bar (refreshed without the clock): a live recording
    # refuses it; a replay reads only what is stored up to its clock (tests/ledger/
    # test_ledger_on_built_home.py), so the stored future does not refuse it
    monkeypatch.delenv("STOCKER_CLOCK")
    settings = get_settings(fresh=True)
    ingest_prices(
        get_source(settings), Warehouse(settings.warehouse_path), "AAPL", [FIRST_DECISION.replace(day=1)]
    )
    assert outcome_exists(settings, "AAPL", next_session(FIRST_DECISION)) == "warehouse"
    replay = set_clock(monkeypatch, after_close(FIRST_DECISION))
    assert outcome_exists(replay, "AAPL", next_session(FIRST_DECISION)) is None


def test_a_rerun_never_rewrites_an_entry(aapl_home, monkeypatch):
    set_clock(monkeypatch, after_close(FIRST_DECISION))
    first = json.loads(invoke("record", "--policies", POLICIES, "--json").stdout)
    # later the same evening, and before the next open: nothing new, nothing rewritten
    set_clock(monkeypatch, before_open(next_session(FIRST_DECISION)))
    again = json.loads(invoke("record", "--policies", POLICIES, "--json").stdout)
    assert len(first["written"]) == 2 and again["written"] == [] and again["already_recorded"] == 2
    assert len(LedgerStore(get_settings()).entry_files()) == 1


@pytest.mark.parametrize(
    ("args", "clock", "says"),
    [
        (["--policies", "buy_and_hold,nope"], after_close(FIRST_DECISION), "unknown policy 'nope'"),
        (["--policies", "ideal"], after_close(FIRST_DECISION), "sees the future"),
        ([], after_close(FIRST_DECISION), "no trained moderator_grpo"),  # the default set, untrained home
        (["--policies", "agent_rl"], after_close(FIRST_DECISION), "no trained agent"),
        (["--policies", POLICIES], "2099-01-05T22:00:00+00:00", "past the exchange calendar"),
        (["--policies", POLICIES], "2022-06-01T22:00:00+00:00", "no bar before the clock"),
        (["--policies", POLICIES, "--for", "2023-06-03"], after_close(FIRST_DECISION), "not an XNYS session"),
        (["--policies", POLICIES, "--for", "2023-06-20"], after_close(FIRST_DECISION), "has not come yet"),
        (["--policies", POLICIES, "--for", "June 2"], after_close(FIRST_DECISION), "use an ISO date"),
    ],
    ids=[
        "unknown-policy",
        "hindsight",
        "untrained-moderator",
        "untrained-agent",
        "clock-past-calendar",
        "clock-before-first-bar",
        "holiday",
        "too-early",
        "bad-date",
    ],
)
def test_bad_input_is_one_line_and_exit_2(aapl_home, monkeypatch, args, clock, says):
    set_clock(monkeypatch, clock)
    assert says in _one_line_error(invoke("record", *args), 2)
    assert LedgerStore(get_settings()).entry_files() == []


def test_a_clock_without_zone_is_exit_2(aapl_home, monkeypatch):
    monkeypatch.setenv("STOCKER_CLOCK", "2023-06-01T22:00:00")
    _cached_settings.cache_clear()  # the command reads the environment afresh, as a new process does
    assert "with a zone" in _one_line_error(invoke("record", "--policies", POLICIES), 2)


def test_an_unwritable_ledger_folder_is_exit_2_and_writes_nothing(aapl_home, monkeypatch):
    aapl_home.mkdir(parents=True, exist_ok=True)
    (aapl_home / "stocker.parts").write_text("a file where the ledger's folder should be")
    set_clock(monkeypatch, after_close(FIRST_DECISION))
    assert "cannot write the ledger folder" in _one_line_error(invoke("record", "--policies", POLICIES), 2)
    assert (aapl_home / "stocker.parts").read_text().startswith("a file")
