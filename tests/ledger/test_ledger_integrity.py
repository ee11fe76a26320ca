"""What people read of the ledger is what ``verify`` checked (issue 43, item 1): one reader for
verify, show, head, export, score, record and the web page; the views read exactly the files the
ledger wrote; the derived tables are checked against the chain and the bars; every malformed
input is one named line; a recording is atomic across its file and ``HEAD`` and a refusal
writes nothing; a published head anchors the chain as a prefix."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, replace
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient
from ledger_testing import (
    DAYS,
    FIRST_DECISION,
    POLICIES,
    after_close,
    before_open,
    invoke,
    one_line_error,
    set_clock,
    tree,
)

from stocker_core.config import Settings, get_settings
from stocker_core.evaluation.forward_report import read_forward_record
from stocker_core.ledger.entries import GENESIS, chain, content_hash
from stocker_core.ledger.reader import read_entries
from stocker_core.ledger.record import record
from stocker_core.ledger.store import Head, LedgerStore
from stocker_core.market.clock import next_session
from stocker_core.warehouse.db import Warehouse
from stocker_core.web.app import create_web_app

_one_line_error = one_line_error
_tree = tree


def _file_of(store: LedgerStore, seq: int) -> Path:
    for path in store.entry_files():
        if seq in pq.read_table(path).column("seq").to_pylist():
            return path
    raise AssertionError(f"no entry #{seq}")


def _web(settings: Settings) -> dict:
    return TestClient(create_web_app(settings, api_key="")).get("/web/api/forward").json()


def _shows_nothing(settings: Settings, says: str) -> None:
    """``show`` and the web page refuse to show a ledger that fails verification."""
    assert says in _one_line_error(invoke("show"), 1)
    data = _web(settings)
    assert data["modes"] == {} and data["record"] == [] and "fails verification" in data["empty"]


# -- one reader: the views read exactly the files verify checks ----------------------------
@pytest.mark.parametrize(
    "forged",
    [
        "entries/session=2016-03-01/extra.parquet",
        "entries/session=2016-03-01/part-000000003.parquet",
        "entries/extra.parquet",
        "entries/session=2023-06-02/part-000000003.parquet.bak",
    ],
)
def test_a_forged_file_under_entries_fails_verify_and_no_one_reads_it(scored, forged):
    store = LedgerStore(scored)
    target = store.root / forged
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(_file_of(store, 3), target)  # a second entry #3
    line = _one_line_error(invoke("verify"), 1)
    assert "entries/session=2016-03-01/extra.parquet" in line or "#3" in line or forged in line
    _shows_nothing(scored, "fails verification")
    assert "fails verification" in _one_line_error(invoke("export"), 1)
    assert "fails verification" in _one_line_error(invoke("score"), 1)
    # the view names its files one by one: the forged one is not among them
    count = Warehouse(scored.warehouse_path).query(
        "SELECT count(*) AS n, count(DISTINCT seq) AS d FROM ledger.entries"
    )
    assert (int(count["n"].iloc[0]), int(count["d"].iloc[0])) == (6, 6)


def test_the_views_refuse_a_file_edited_after_the_ledger_wrote_it(scored):
    store = LedgerStore(scored)
    path = _file_of(store, 3)
    frame = pd.read_parquet(path)
    frame.loc[frame["seq"] == 3, "target_exposure"] = 1.0
    frame.to_parquet(path, index=False)
    assert "#3" in _one_line_error(invoke("verify"), 1)
    with pytest.raises(duckdb.Error, match="changed since the ledger wrote it"):
        Warehouse(scored.warehouse_path).query("SELECT * FROM ledger.entries")


# -- derived tables: checked against the chain and the bars --------------------------------
def _edit_table(store: LedgerStore, name: str, change) -> None:
    path = store.table_path(name)
    change(pd.read_parquet(path)).to_parquet(path, index=False)


def _macd_plus_fifty(frame: pd.DataFrame) -> pd.DataFrame:
    mask = frame["policy"] == "macd"
    if "excess" in frame:
        frame.loc[mask, "excess"] = 0.5
    else:
        frame.loc[mask, ["excess_cumulative", "p_value"]] = [0.5, 0.001]
    return frame


@pytest.mark.parametrize("tables", [("scores", "record"), ("scores",), ("record",)])
def test_edited_scores_or_record_fail_verify_and_are_shown_by_no_one(scored, tables):
    store = LedgerStore(scored)
    for name in tables:
        _edit_table(store, name, _macd_plus_fifty)
    assert tables[0] in _one_line_error(invoke("verify"), 1)
    _shows_nothing(scored, "fails verification")
    assert read_forward_record(Warehouse(scored.warehouse_path)).empty  # the report's read: refused
    for view in ("entries", "scores", "record"):  # `stocker sql`: any file changed, every view refuses
        with pytest.raises(duckdb.Error, match="changed since"):
            Warehouse(scored.warehouse_path).query(f"SELECT * FROM ledger.{view}")
    # scoring refuses to write over them (they are evidence); --recompute does, from the verified
    # chain and the bars, saying what it discarded (issue 52)
    assert "fails verification" in _one_line_error(invoke("score"), 1)
    assert invoke("score", "--recompute").exit_code == 0
    assert invoke("verify").exit_code == 0
    macd = json.loads(invoke("show", "--json").stdout)["record"]
    assert all(r["excess_cumulative"] != 0.5 for r in macd)


def test_a_consistent_forgery_of_an_outcome_close_is_caught_by_the_bars(scored):
    """Every derived figure recomputed from a forged close, SCORED's digests updated: only the
    bars tell; ``verify`` (and ``show``, which reads what verify reads) re-score from them."""
    from stocker_core.ledger.reader import read_ledger
    from stocker_core.ledger.score import entry_return, forward_record

    store = LedgerStore(scored)
    scores = pd.read_parquet(store.table_path("scores"))
    forged = scores["policy"] == "macd"
    scores.loc[forged, "outcome_close"] *= 1.5
    scores["session_return"] = scores["outcome_close"] / scores["decision_close"] - 1.0
    scores["policy_return"] = [
        entry_return(e, f, c0, c1)
        for e, f, c0, c1 in zip(
            scores["target_exposure"],
            scores["cost_fraction"],
            scores["decision_close"],
            scores["outcome_close"],
            strict=True,
        )
    ]
    scores["excess"] = scores["policy_return"] - scores["benchmark_return"]
    ledger = read_ledger(store)
    store.write_derived(scores, forward_record(scores), ledger.scored.head, ledger.scored.at)
    line = _one_line_error(invoke("verify"), 1)
    assert "outcome close" in line and "the bar's close" in line
    assert "outcome close" in _one_line_error(invoke("show"), 1)


def test_score_refuses_a_chain_that_fails_verification_and_writes_nothing(scored):
    store = LedgerStore(scored)
    path = _file_of(store, 2)
    frame = pd.read_parquet(path)
    frame.loc[frame["seq"] == 2, "target_exposure"] = 0.0
    frame.to_parquet(path, index=False)
    before = _tree(scored.home)
    line = _one_line_error(invoke("score"), 1)
    assert "#2" in line and "nothing scored" in line
    assert _tree(scored.home) == before


# -- HEAD -----------------------------------------------------------------------------------
@pytest.mark.parametrize("with_last_file", [False, True], ids=["head-alone", "head-and-last-file"])
def test_a_missing_head_is_an_error(scored, with_last_file):
    store = LedgerStore(scored)
    store.head_path.unlink()
    if with_last_file:
        store.entry_files()[-1].unlink()
    line = _one_line_error(invoke("verify"), 1)
    assert "HEAD is missing" in line
    _shows_nothing(scored, "HEAD is missing")
    assert "HEAD is missing" in _one_line_error(invoke("score"), 1)
    assert "HEAD is missing" in _one_line_error(invoke("head"), 1)


def test_verify_file_without_head_does_not_claim_a_head(scored, tmp_path):
    exported = tmp_path / "ledger.jsonl"
    assert invoke("export", "-o", str(exported)).exit_code == 0
    result = invoke("verify", "--file", str(exported))
    assert result.exit_code == 0
    assert "head verified" not in result.stdout and "no head checked" in result.stdout
    exported.write_text("".join(exported.read_text().splitlines(keepends=True)[:4]))  # #5, #6 cut
    assert "no head checked" in invoke("verify", "--file", str(exported)).stdout


# -- values hashed exactly as stored -------------------------------------------------------
@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda line: _set(line, "note", "x"), "'note' is not one the ledger writes"),
        (lambda line: _set(line, "shares", 13.9), "shares must be a whole number"),
        (lambda line: _set(line, "seq", 3.7), "seq must be a whole number"),
        (lambda line: _set(line, "shares", True), "shares must be a whole number"),
        (lambda line: _set(line, "target_exposure", 0), "target_exposure must be a number with a fraction"),
        (lambda line: line.replace("{", '{"shares": 1, ', 1), "appears twice"),
        (lambda line: line.replace("{", '{"ticker": "MSFT", ', 1), "appears twice"),
        (lambda line: _raw(line, "target_exposure", "NaN"), "NaN"),
        (lambda line: _raw(line, "cost_fraction", "Infinity"), "Infinity"),
        (lambda line: line.replace('"mode": "replayed"', '"mode": "live"', 1), "does not match its hash"),
        (lambda line: line[: len(line) // 2], "not a ledger entry"),
        (lambda line: "[1, 2, 3]", "expected an object"),
        (lambda line: "[" * 100_000, "not a ledger entry"),
    ],
    ids=[
        "unknown-field",
        "float-shares",
        "float-seq",
        "bool-shares",
        "int-exposure",
        "duplicate-key",
        "duplicate-ticker",
        "nan",
        "infinity",
        "rewritten",
        "truncated-line",
        "not-an-object",
        "deep-nesting",
    ],
)
def test_an_export_verifies_only_with_values_as_hashed(scored, tmp_path, edit, says):
    exported = tmp_path / "ledger.jsonl"
    assert invoke("export", "-o", str(exported)).exit_code == 0
    lines = exported.read_text().splitlines()
    lines[2] = edit(lines[2])
    exported.write_text("\n".join(lines) + "\n")
    line = _one_line_error(invoke("verify", "--file", str(exported)), 1)
    assert says in line
    assert "ledger.jsonl:3" in line or "#3" in line


def _set(line: str, field: str, value: object) -> str:
    data = json.loads(line)
    data[field] = value
    return json.dumps(data, sort_keys=True)


def _raw(line: str, field: str, text: str) -> str:
    data = json.loads(line)
    data[field] = "@@"
    return json.dumps(data, sort_keys=True).replace('"@@"', text)


def test_an_export_that_is_not_text_or_not_there_is_one_line(scored, tmp_path):
    binary = tmp_path / "ledger.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "not UTF-8" in _one_line_error(invoke("verify", "--file", str(binary)), 1)
    assert "cannot read" in _one_line_error(invoke("verify", "--file", str(tmp_path / "nope.jsonl")), 2)
    assert "cannot read" in _one_line_error(invoke("verify", "--file", str(tmp_path)), 2)


# -- every malformed input of the store: one named line ------------------------------------
def _rewrite_file(store: LedgerStore, seq: int, change) -> None:
    path = _file_of(store, seq)
    change(pq.read_table(path), path)


def _nan_exposure(table: pa.Table, path: Path) -> None:
    exposure = [
        float("nan") if s == 3 else x
        for s, x in zip(table["seq"].to_pylist(), table["target_exposure"].to_pylist(), strict=True)
    ]
    index = table.column_names.index("target_exposure")
    pq.write_table(
        table.set_column(index, "target_exposure", pa.array(exposure, pa.float64(), from_pandas=False)), path
    )


def _null_exposure(table: pa.Table, path: Path) -> None:
    frame = table.to_pandas()
    frame.loc[frame["seq"] == 3, "target_exposure"] = float("nan")  # pandas writes NaN as a null
    frame.to_parquet(path, index=False)


def _drop_column(table: pa.Table, path: Path) -> None:
    pq.write_table(table.drop_columns(["shares"]), path)


def _float_shares(table: pa.Table, path: Path) -> None:
    frame = table.to_pandas()
    frame["shares"] = frame["shares"].astype(float) + 0.9
    frame.to_parquet(path, index=False)


def _extra_column(table: pa.Table, path: Path) -> None:
    pq.write_table(table.append_column("note", pa.array(["forged"] * table.num_rows)), path)


def _truncate(table: pa.Table, path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _null_ticker(table: pa.Table, path: Path) -> None:
    frame = table.to_pandas()
    frame["ticker"] = frame["ticker"].astype(object)
    frame.loc[frame["seq"] == 3, "ticker"] = None
    frame.to_parquet(path, index=False)


def _empty_file(table: pa.Table, path: Path) -> None:
    pq.write_table(table.slice(0, 0), path)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_nan_exposure, "target_exposure must be finite"),
        (_null_exposure, "target_exposure is null"),
        (_drop_column, "column shares is missing"),
        (_float_shares, "column shares holds double"),
        (_extra_column, "column 'note' is not one the ledger writes"),
        (_truncate, "not a readable Parquet file"),
        (_null_ticker, "ticker is null"),
        (_empty_file, "holds no entry"),
    ],
    ids=[
        "nan-exposure",
        "null-exposure",
        "missing-column",
        "float-shares",
        "extra-column",
        "truncated",
        "null",
        "empty",
    ],
)
def test_a_malformed_entry_file_is_one_named_line(scored, monkeypatch, change, says):
    store = LedgerStore(scored)
    _rewrite_file(store, 3, change)
    assert says in _one_line_error(invoke("verify"), 1)
    _shows_nothing(scored, says)
    assert says in _one_line_error(invoke("score"), 1)
    assert says in _one_line_error(invoke("head"), 1)
    before = _tree(scored.home)
    set_clock(monkeypatch, after_close(next_session(DAYS[-1])))  # nothing recorded on top of it
    assert says in _one_line_error(invoke("record", "--policies", POLICIES), 1)
    assert _tree(scored.home) == before


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "HEAD is not what the ledger writes"),
        ('{"entries": 6}', "HEAD is not what the ledger writes"),
        ('{"entries": 6.0, "hash": "' + "0" * 64 + '"}', "entries must be a whole number"),
        ('{"entries": 6, "hash": "xyz"}', "hash must be 64 lowercase hex digits"),
        ('{"entries": 6, "entries": 6, "hash": "' + "0" * 64 + '"}', "appears twice"),
        ("\udcff", "HEAD is not what the ledger writes"),
    ],
    ids=["not-json", "no-hash", "float-count", "bad-hash", "duplicate-key", "not-utf8"],
)
def test_a_malformed_head_is_one_named_line(scored, text, says):
    store = LedgerStore(scored)
    store.head_path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert says in _one_line_error(invoke("verify"), 1)
    _shows_nothing(scored, says)


def test_malformed_scored_is_one_named_line(scored):
    LedgerStore(scored).scored_path.write_text("not json")
    assert "SCORED is not what" in _one_line_error(invoke("verify"), 1)
    _shows_nothing(scored, "SCORED")
    assert "SCORED" in _one_line_error(invoke("score"), 1)  # evidence: never written over unasked
    assert invoke("score", "--recompute").exit_code == 0 and invoke("verify").exit_code == 0


@pytest.mark.parametrize(
    "head",
    [
        "²²:" + "a" * 64,
        "0:" + "a" * 64,
        "22:" + "g" * 64,
        "22:abc",
        "-1:" + "a" * 64,
        "22",
        "",
        "٣:" + "a" * 64,
    ],
)
def test_a_malformed_published_head_is_exit_2(scored, tmp_path, head):
    assert "--head" in _one_line_error(invoke("verify", "--head", head), 2)
    exported = tmp_path / "ledger.jsonl"
    assert invoke("export", "-o", str(exported)).exit_code == 0
    assert "--head" in _one_line_error(invoke("verify", "--file", str(exported), "--head", head), 2)


# -- record: atomic across its file and HEAD; a refusal writes nothing ---------------------
class Killed(BaseException):
    """A process killed between writing a part file and moving HEAD."""


@pytest.mark.parametrize("recordings_before", [0, 1], ids=["first-recording", "later-recording"])
def test_a_recording_killed_before_head_is_finished_by_a_rerun(aapl_home, monkeypatch, recordings_before):
    for day in DAYS[:recordings_before]:
        set_clock(monkeypatch, after_close(day))
        assert invoke("record", "--policies", POLICIES).exit_code == 0
    settings = set_clock(monkeypatch, after_close(DAYS[recordings_before]))
    store = LedgerStore(settings)

    def killed(self, head):
        raise Killed

    with monkeypatch.context() as patched:
        patched.setattr(LedgerStore, "set_head", killed)
        with pytest.raises(Killed):
            record(settings, POLICIES.split(","))
    orphan = store.entry_files()[-1]
    assert len(store.entry_files()) == recordings_before + 1
    line = _one_line_error(invoke("verify"), 1)
    assert "`stocker ledger record` finishes it" in line
    assert "nothing scored" in _one_line_error(invoke("score"), 1)

    again = json.loads(invoke("record", "--policies", POLICIES, "--json").stdout)  # the rerun
    assert again["written"] == [] and again["already_recorded"] == 2
    assert (
        again["finished"]
        == f"{2 * recordings_before + 2}:" + pq.read_table(orphan).column("hash")[-1].as_py()
    )
    assert invoke("verify").exit_code == 0
    assert store.entry_files()[-1] == orphan
    # and the next session records on top of it
    set_clock(monkeypatch, after_close(next_session(DAYS[recordings_before])))
    assert invoke("record", "--policies", POLICIES).exit_code == 0
    assert invoke("verify").exit_code == 0


def test_a_leftover_temporary_file_is_read_by_no_one_and_removed_by_the_next_recording(scored, monkeypatch):
    store = LedgerStore(scored)
    leftover = store.entries_dir / f"session={DAYS[-1]}" / ".part-abc123.tmp"
    leftover.write_bytes(b"half a parquet file")
    assert invoke("verify").exit_code == 0
    set_clock(monkeypatch, after_close(next_session(DAYS[-1])))
    assert invoke("record", "--policies", POLICIES).exit_code == 0
    assert not leftover.exists()


@pytest.mark.parametrize(
    ("args", "clock", "code"),
    [
        (["--for", str(FIRST_DECISION)], after_close(FIRST_DECISION), 1),  # outcome knowable
        (["--policies", "nope"], after_close(FIRST_DECISION), 2),
        ([], "2022-06-01T22:00:00+00:00", 2),  # no bar before the clock
    ],
    ids=["refused", "unknown-policy", "no-bars"],
)
def test_a_refused_recording_writes_nothing_not_even_a_folder(aapl_home, monkeypatch, args, clock, code):
    set_clock(monkeypatch, clock)
    aapl_home.mkdir(parents=True, exist_ok=True)
    before = _tree(aapl_home)
    policies = [] if "--policies" in args else ["--policies", POLICIES]
    _one_line_error(invoke("record", *policies, *args), code)
    assert _tree(aapl_home) == before
    assert not (aapl_home / "stocker.parts").exists()


def test_a_refusal_on_an_existing_ledger_writes_nothing(scored, monkeypatch):
    before = _tree(scored.home)
    set_clock(monkeypatch, after_close(DAYS[-1]))
    _one_line_error(invoke("record", "--policies", POLICIES, "--for", str(DAYS[-1])), 1)
    set_clock(monkeypatch, before_open(next_session(DAYS[-1])))  # already recorded: nothing to do
    assert invoke("record", "--policies", POLICIES).exit_code == 0
    assert _tree(scored.home) == before


# -- anchoring: a published head is a prefix of every later chain --------------------------
def test_a_later_export_verifies_against_an_earlier_published_head(aapl_home, monkeypatch, tmp_path):
    for day in DAYS[:2]:
        set_clock(monkeypatch, after_close(day))
        assert invoke("record", "--policies", POLICIES).exit_code == 0
    published = invoke("head").stdout.strip()
    assert published.startswith("4:") and len(published) == 2 + 64
    assert json.loads(invoke("head", "--json").stdout) == {"entries": 4, "hash": published[2:]}
    set_clock(monkeypatch, after_close(DAYS[2]))
    assert invoke("record", "--policies", POLICIES).exit_code == 0
    later = invoke("head").stdout.strip()
    exported = tmp_path / "ledger.jsonl"
    assert invoke("export", "-o", str(exported)).exit_code == 0

    result = invoke("verify", "--file", str(exported), "--head", published)
    assert result.exit_code == 0 and "matches the published head 4:" in result.stdout
    assert "2 entries recorded after it" in result.stdout
    both = invoke("verify", "--file", str(exported), "--head", published, "--head", later)
    assert both.exit_code == 0
    assert invoke("verify", "--head", published).exit_code == 0  # the store, against it

    # rewriting an old entry (replayed → live) and every later hash and HEAD: intact locally,
    # caught only against the head published elsewhere
    store = LedgerStore(get_settings())
    entries = read_entries(store)
    drafts = [asdict(e) for e in entries]
    for d in drafts:
        del d["seq"], d["prev_hash"], d["hash"]
    drafts[0]["mode"] = "live"
    rewritten = chain(drafts, 1, GENESIS)
    for path in store.entry_files():
        seqs = pq.read_table(path).column("seq").to_pylist()
        pd.DataFrame([asdict(rewritten[s - 1]) for s in seqs]).to_parquet(path, index=False)
    store.set_head(Head(len(rewritten), rewritten[-1].hash))
    assert invoke("verify").exit_code == 0  # what verify cannot know alone
    line = _one_line_error(invoke("verify", "--head", published), 1)
    assert "entry #4 does not match the published head 4:" in line and "rewritten" in line
    assert invoke("export", "-o", str(exported)).exit_code == 0
    assert "rewritten" in _one_line_error(invoke("verify", "--file", str(exported), "--head", published), 1)


def test_a_published_head_past_the_chain_is_entries_missing(scored, tmp_path):
    exported = tmp_path / "ledger.jsonl"
    assert invoke("export", "-o", str(exported)).exit_code == 0
    head = invoke("head").stdout.strip()
    exported.write_text("".join(exported.read_text().splitlines(keepends=True)[:4]))
    assert "#5 is missing" in _one_line_error(invoke("verify", "--file", str(exported), "--head", head), 1)


def test_head_of_an_empty_ledger_is_exit_1(aapl_home):
    assert "empty" in _one_line_error(invoke("head"), 1)


# -- the chain check by hand --------------------------------------------------------------
def test_verify_chain_names_a_number_twice_and_values_never_hashed():
    from stocker_core.ledger.verify import verify_chain

    draft = {
        "ticker": "AAPL",
        "policy": "macd",
        "decided_on": "2023-06-01",
        "for_session": "2023-06-02",
        "target_exposure": 0.5,
        "shares": 10,
        "decision_close": 180.0,
        "cost_fraction": 0.001,
        "model_version": "rules",
        "inputs_hash": "ab" * 32,
        "recorded_at": "2023-06-01T21:00:00+00:00",
        "mode": "replayed",
        "source": "files",
    }
    entries = chain([draft, draft], 1, GENESIS)
    assert "entry #2 appears twice" in verify_chain([*entries, entries[1]]).first_problem
    nan = replace(entries[0], target_exposure=float("nan"))
    assert "never hashes" in verify_chain([nan]).first_problem
    assert content_hash(entries[0].content()) == entries[0].hash
    earlier = Head(1, entries[0].hash)
    assert verify_chain(entries, published=[earlier]).ok
    assert "rewritten" in verify_chain(entries, published=[Head(1, "f" * 64)]).first_problem


def _truncate_scores(store: LedgerStore) -> None:
    path = store.table_path("scores")
    path.write_bytes(path.read_bytes()[:100])


def _scores_without_a_column(store: LedgerStore) -> None:
    _edit_table(store, "scores", lambda f: f.drop(columns=["excess"]))


def _scores_without_a_row(store: LedgerStore) -> None:
    _edit_table(store, "scores", lambda f: f.iloc[:-1])


def _scored_later_chain(store: LedgerStore) -> None:
    data = json.loads(store.scored_path.read_text())
    data["entries"] = 9
    store.scored_path.write_text(json.dumps(data))


def _scored_earlier(store: LedgerStore) -> None:
    data = json.loads(store.scored_path.read_text())
    data["at"] = after_close(DAYS[0])
    store.scored_path.write_text(json.dumps(data))


def _scores_a_folder(store: LedgerStore) -> None:
    path = store.table_path("scores")
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_truncate_scores, "scores/part.parquet: not a readable Parquet file"),
        (_scores_without_a_column, "scores/part.parquet: column excess is missing"),
        (_scores_without_a_row, "record/part.parquet"),
        (_scored_later_chain, "SCORED says the scores were computed from the chain up to #9"),
        (_scored_earlier, "before its outcome bar's close"),
        (_scores_a_folder, "not a file the ledger writes"),
    ],
    ids=["truncated", "missing-column", "row-removed", "scored-past-the-chain", "scored-earlier", "folder"],
)
def test_malformed_derived_tables_are_one_named_line(scored, change, says):
    change(LedgerStore(scored))
    assert says in _one_line_error(invoke("verify"), 1)
    _shows_nothing(scored, says)
    assert says in _one_line_error(invoke("score"), 1)  # never written over unasked (issue 52)
    if change is _scores_a_folder:
        assert "cannot write the ledger's scores" in _one_line_error(invoke("score", "--recompute"), 2)
    elif change is _scored_later_chain:  # computed from another chain: evidence even --recompute keeps
        assert says in _one_line_error(invoke("score", "--recompute"), 1)
    else:  # --recompute rewrites them from the verified chain and the bars
        assert invoke("score", "--recompute").exit_code == 0 and invoke("verify").exit_code == 0
