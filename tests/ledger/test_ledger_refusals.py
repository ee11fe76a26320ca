"""A ledger that fails verification stops every write (issue 52): every ledger file is read with a
size bound and only as a regular file inside the ledger folder; ``head``, ``export``, ``record``
and ``score`` refuse whenever ``verify`` fails, derived tables included; an interrupted recording
or scoring is finished only when the evidence says so."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from ledger_testing import DAYS, POLICIES, after_close, invoke, one_line_error, set_clock, tree

from stocker_core.config import Settings
from stocker_core.ledger.record import record
from stocker_core.ledger.service import score_ledger
from stocker_core.ledger.store import Head, LedgerStore
from stocker_core.market.clock import next_session

NEXT_DAY = next_session(DAYS[-1])
"""The decision day after the ``scored`` fixture's last: a recording there would write #7 …"""
TIME_BOUND = 10.0
MEMORY_BOUND = 4 * 1024**3
"""Address space for a command run in a subprocess: an unbounded read dies instead of swapping."""


def _stocker(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    """``stocker ledger <args>`` in a fresh process bounded in time and memory, and its duration."""

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BOUND, MEMORY_BOUND))

    start = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from stocker_assets.cli import app; app()", "ledger", *args],
            capture_output=True,
            text=True,
            timeout=TIME_BOUND * 3,
            preexec_fn=bounded,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`stocker ledger {' '.join(args)}` still running after {TIME_BOUND * 3:.0f} s")
    return done, time.monotonic() - start


def _refused_in_time(*args: str) -> str:
    """The command exits 1 within the time bound with one ``error:`` line, no traceback."""
    done, seconds = _stocker(*args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert seconds < TIME_BOUND, f"took {seconds:.1f} s"
    return lines[0]


def _nothing_written_by_any_write(settings: Settings, monkeypatch: pytest.MonkeyPatch, says: str) -> None:
    """``verify``, ``head``, ``export``, ``score`` (even ``--recompute``, where the tables were
    computed from another chain) and a recording of the next session all exit 1 with one line
    naming ``says``, and nothing under the home changes."""
    before = tree(settings.home)
    assert says in one_line_error(invoke("verify"), 1)
    assert says in one_line_error(invoke("head"), 1)
    assert says in one_line_error(invoke("export", "-o", str(settings.home / "out.jsonl")), 1)
    assert says in one_line_error(invoke("score"), 1)
    set_clock(monkeypatch, after_close(NEXT_DAY))
    assert says in one_line_error(invoke("record", "--policies", POLICIES), 1)
    assert tree(settings.home) == before


# -- reading: regular files inside the ledger folder, bounded --------------------------------
def test_head_linked_to_dev_zero_is_one_line_within_seconds(scored):
    head = LedgerStore(scored).head_path
    head.unlink()
    head.symlink_to("/dev/zero")
    assert "HEAD" in _refused_in_time("verify")
    assert "symbolic link" in _refused_in_time("head")


def test_head_as_a_fifo_is_named_not_waited_on(scored):
    head = LedgerStore(scored).head_path
    head.unlink()
    os.mkfifo(head)
    assert "FIFO" in _refused_in_time("verify")
    assert "FIFO" in _refused_in_time("record", "--policies", POLICIES)


def test_a_huge_head_is_not_read(scored):
    head = LedgerStore(scored).head_path
    with head.open("r+b") as handle:
        handle.truncate(64 * 1024**3)  # sparse: 64 GiB that take no disk
    assert "more than the ledger writes" in _refused_in_time("verify")


def _link_outside(path: Path, tmp_path: Path) -> None:
    """Replace ``path`` by a link to a copy of it outside the ledger folder (same bytes)."""
    outside = tmp_path / f"outside-{path.name}"
    shutil.copy(path, outside)
    path.unlink()
    path.symlink_to(outside)


@pytest.mark.parametrize(
    "where",
    ["HEAD", "SCORED", "scores/part.parquet", "record/part.parquet"],
)
def test_a_ledger_file_linked_outside_the_folder_is_refused(scored, tmp_path, monkeypatch, where):
    _link_outside(LedgerStore(scored).root / where, tmp_path)
    _nothing_written_by_any_write(scored, monkeypatch, "symbolic link")


def test_a_derived_folder_linked_outside_is_refused(scored, tmp_path, monkeypatch):
    folder = LedgerStore(scored).root / "scores"
    shutil.copytree(folder, tmp_path / "scores")
    shutil.rmtree(folder)
    folder.symlink_to(tmp_path / "scores")
    _nothing_written_by_any_write(scored, monkeypatch, "scores/part.parquet")


def test_a_session_folder_linked_elsewhere_or_a_part_file_made_a_folder_is_refused(
    scored, tmp_path, monkeypatch
):
    store = LedgerStore(scored)
    folder = store.entries_dir / f"session={DAYS[-1]}"
    shutil.copytree(folder, tmp_path / "session")
    shutil.rmtree(folder)
    folder.symlink_to(tmp_path / "session")
    _nothing_written_by_any_write(scored, monkeypatch, f"session={DAYS[-1]}")
    folder.unlink()
    shutil.copytree(tmp_path / "session", folder)
    part = next(folder.iterdir())
    part.unlink()
    part.mkdir()
    _nothing_written_by_any_write(scored, monkeypatch, part.name)


def _fifo_part(store: LedgerStore) -> None:
    part = store.entry_files()[-1]
    part.unlink()
    os.mkfifo(part)


def _huge_part(store: LedgerStore) -> None:
    with store.entry_files()[-1].open("r+b") as handle:
        handle.truncate(300 * 1024**2)  # sparse


def _entries_linked(store: LedgerStore) -> None:
    outside = store.root.parent / "elsewhere"
    shutil.copytree(store.entries_dir, outside)
    shutil.rmtree(store.entries_dir)
    store.entries_dir.symlink_to(outside)


def _scores_folder_a_file(store: LedgerStore) -> None:
    shutil.rmtree(store.root / "scores")
    (store.root / "scores").write_text("not a folder")


def _scored_a_folder(store: LedgerStore) -> None:
    store.scored_path.unlink()
    store.scored_path.mkdir()


def _intent_linked_to_dev_zero(store: LedgerStore) -> None:
    _edit_scores(store)
    store.scoring_path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_fifo_part, "part-000000005.parquet: not a file the ledger writes"),
        (_huge_part, "more than the ledger writes"),
        (_entries_linked, "entries is not a folder the ledger wrote"),
        (_scores_folder_a_file, "a folder on its path is not a folder"),
        (_scored_a_folder, "SCORED is not what `stocker ledger score` writes: a folder"),
        (_intent_linked_to_dev_zero, "its excess is +50.000%"),
    ],
    ids=["fifo-part", "huge-part", "entries-linked", "scores-a-file", "scored-a-folder", "intent-dev-zero"],
)
def test_special_files_anywhere_in_the_ledger_stop_every_write(scored, monkeypatch, change, says):
    change(LedgerStore(scored))
    _nothing_written_by_any_write(scored, monkeypatch, says)


def test_a_lock_file_made_a_fifo_does_not_block_a_recording(scored, monkeypatch):
    lock = LedgerStore(scored).root / ".lock"
    lock.unlink()
    os.mkfifo(lock)
    set_clock(monkeypatch, after_close(NEXT_DAY))
    done, seconds = _stocker("record", "--policies", POLICIES)
    assert done.returncode == 2 and ".lock" in done.stderr and seconds < TIME_BOUND, done.stderr[-2000:]


def test_verify_file_refuses_a_device(scored):
    done, seconds = _stocker("verify", "--file", "/dev/zero")
    assert done.returncode == 2 and "not a file" in done.stderr and seconds < TIME_BOUND, done.stderr[-2000:]


# -- derived tables that fail stop every write ------------------------------------------------
def _edit_scores(store: LedgerStore) -> None:
    path = store.table_path("scores")
    frame = pd.read_parquet(path)
    frame.loc[frame["policy"] == "macd", "excess"] = 0.5
    frame.to_parquet(path, index=False)


def _edit_record(store: LedgerStore) -> None:
    path = store.table_path("record")
    frame = pd.read_parquet(path)
    frame["excess_cumulative"] = 0.5
    frame.to_parquet(path, index=False)


def _edit_scored(store: LedgerStore) -> None:
    data = json.loads(store.scored_path.read_text())
    data["at"] = after_close(DAYS[0])
    store.scored_path.write_text(json.dumps(data))


def _truncate_scored(store: LedgerStore) -> None:
    text = store.scored_path.read_text()
    store.scored_path.write_text(text[: len(text) // 2])


def _scored_before(store: LedgerStore) -> None:
    data = json.loads(store.scored_path.read_text())
    first = pd.read_parquet(store.entries_dir / f"session={DAYS[0]}" / "part-000000001.parquet")
    data["entries"], data["hash"] = 2, str(first["hash"].iloc[-1])
    store.scored_path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_scored_before, "row #3 scores no entry of the chain it was computed from"),
        (_edit_scores, "scores/part.parquet"),
        (_edit_record, "record/part.parquet"),
        (_edit_scored, "before its outcome bar's close"),
        (_truncate_scored, "SCORED is not what"),
    ],
    ids=["scored-before", "scores", "record", "scored-edited", "scored-truncated"],
)
def test_derived_tables_that_fail_stop_head_export_record_and_score(scored, monkeypatch, change, says):
    change(LedgerStore(scored))
    _nothing_written_by_any_write(scored, monkeypatch, says)
    # rewriting them is a deliberate, named act: from the verified chain and the bars
    done = invoke("score", "--recompute")
    assert done.exit_code == 0 and "recomputed the scores and record" in done.stderr, done.output
    assert invoke("verify").exit_code == 0


# -- an interrupted recording only when the evidence says so ----------------------------------
def test_deleting_head_and_the_last_sessions_is_not_an_interrupted_first_recording(scored, monkeypatch):
    store = LedgerStore(scored)
    store.head_path.unlink()
    for day in DAYS[1:]:
        shutil.rmtree(store.entries_dir / f"session={day}")
    says = "SCORED says the chain was scored up to #6, past a missing HEAD"
    line = one_line_error(invoke("verify"), 1)
    assert says in line and "finishes it" not in line
    _nothing_written_by_any_write(scored, monkeypatch, says)
    # not even --recompute writes over the evidence
    assert "#6" in one_line_error(invoke("score", "--recompute"), 1)


class KilledBeforeHead(BaseException):
    """A process killed between writing a part file and moving HEAD."""


def test_a_recording_killed_after_a_scoring_is_still_finished(scored, monkeypatch):
    """The evidence agrees (SCORED scored up to HEAD, not past it): the rerun finishes it."""
    settings = set_clock(monkeypatch, after_close(NEXT_DAY))

    def killed(self, head):
        raise KilledBeforeHead

    with monkeypatch.context() as patched:
        patched.setattr(LedgerStore, "set_head", killed)
        with pytest.raises(KilledBeforeHead):
            record(settings, POLICIES.split(","))
    assert "`stocker ledger record` finishes it" in one_line_error(invoke("verify"), 1)
    again = invoke("record", "--policies", POLICIES, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["finished"].startswith("8:"), again.output
    assert invoke("verify").exit_code == 0


def test_every_trace_but_the_views_deleted_is_not_an_interrupted_first_recording(scored, monkeypatch):
    """HEAD, the last sessions, SCORED and the tables deleted: the warehouse's views still say a
    recording once moved HEAD (a first recording killed before HEAD never defines them)."""
    store = LedgerStore(scored)
    store.head_path.unlink()
    store.scored_path.unlink()
    for folder in [*(store.entries_dir / f"session={day}" for day in DAYS[1:]), store.root / "scores"]:
        shutil.rmtree(folder)
    shutil.rmtree(store.root / "record")
    _nothing_written_by_any_write(scored, monkeypatch, "stocker.duckdb's ledger views were defined")


def test_head_moved_back_is_not_an_interrupted_recording(scored, monkeypatch):
    store = LedgerStore(scored)
    fourth = pd.read_parquet(store.entries_dir / f"session={DAYS[1]}" / "part-000000003.parquet")
    store.set_head(Head(4, str(fourth["hash"].iloc[-1])))
    says = "SCORED says the chain was scored up to #6, past HEAD (#4)"
    _nothing_written_by_any_write(scored, monkeypatch, says)


def test_head_and_sessions_deleted_consistently_is_caught_by_scored(scored, monkeypatch):
    store = LedgerStore(scored)
    for day in DAYS[1:]:
        shutil.rmtree(store.entries_dir / f"session={day}")
    first = pd.read_parquet(store.entries_dir / f"session={DAYS[0]}" / "part-000000001.parquet")
    store.set_head(Head(2, str(first["hash"].iloc[-1])))
    says = "SCORED says the scores were computed from the chain up to #6"
    _nothing_written_by_any_write(scored, monkeypatch, says)
    assert "#6" in one_line_error(invoke("score", "--recompute"), 1)


# -- an interrupted scoring: finished by the next one, refused by every other write -----------
class Killed(BaseException):
    """A process killed between replacing the derived tables and writing SCORED."""


def test_a_scoring_killed_before_scored_is_finished_by_the_next_scoring(scored, monkeypatch):
    store = LedgerStore(scored)
    replace = os.replace

    def killed_at_scored(src, dst, *args, **kwargs):
        if Path(dst) == store.scored_path:
            raise Killed
        return replace(src, dst, *args, **kwargs)

    set_clock(monkeypatch, after_close(NEXT_DAY))
    assert invoke("record", "--policies", POLICIES).exit_code == 0  # entries #7, #8
    later = set_clock(monkeypatch, after_close(next_session(NEXT_DAY)))
    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", killed_at_scored)
        with pytest.raises(Killed):
            score_ledger(later)
    says = "a scoring interrupted before it wrote SCORED"
    assert says in one_line_error(invoke("verify"), 1)
    assert says in one_line_error(invoke("record", "--policies", POLICIES), 1)
    assert says in one_line_error(invoke("head"), 1)
    assert invoke("score").exit_code == 0
    assert invoke("verify").exit_code == 0
