"""Connections are cursors of a long-lived host instance with the file attached
(``warehouse.attached``): one DuckDB instance per file and mode in a process, the file's lock
released between operations, a forked child with hosts of its own, idle hosts closed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from stocker_core.warehouse import Warehouse, attached


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    built = Warehouse(tmp_path / "home" / "stocker.duckdb")
    with built.connect() as con:
        con.execute("CREATE TABLE meta.numbers AS SELECT range AS x FROM range(10)")
    return built


def test_many_operations_open_one_instance_per_mode(warehouse, monkeypatch):
    opened: list[str] = []
    real_connect = duckdb.connect

    def counting(database: str = ":memory:", *args, **kwargs):
        opened.append(database)
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(attached.duckdb, "connect", counting)
    for _ in range(20):
        assert int(warehouse.query("SELECT count(*) AS n FROM meta.numbers")["n"].iloc[0]) == 10
        with warehouse.transaction() as con:
            con.execute("INSERT INTO meta.numbers VALUES (99)")
            con.execute("DELETE FROM meta.numbers WHERE x = 99")
    assert len(opened) <= 2, opened  # a read host and a write host at most (before: 40 instances)


def test_another_process_writes_between_two_operations(warehouse):
    assert len(warehouse.query("SELECT * FROM meta.numbers")) == 10
    insert = f"duckdb.connect({str(warehouse.path)!r}).execute('INSERT INTO meta.numbers VALUES (10)')"
    other = subprocess.run(
        [sys.executable, "-c", f"import duckdb; {insert}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert other.returncode == 0, other.stderr  # the file's lock was released after the read
    assert len(warehouse.query("SELECT * FROM meta.numbers")) == 11  # and its write is seen


FORKED_CHILD = """
import multiprocessing, sys
from pathlib import Path
from stocker_core.warehouse.db import Warehouse

def count(path, queue):
    queue.put(len(Warehouse(Path(path)).query("SELECT * FROM meta.numbers")))

if __name__ == "__main__":
    warehouse = Warehouse(Path(sys.argv[1]))
    assert len(warehouse.query("SELECT * FROM meta.numbers")) == 10  # the parent has hosts
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=count, args=(sys.argv[1], queue))
    child.start()
    child.join(timeout=60)
    print(child.exitcode, queue.get(timeout=5), len(warehouse.query("SELECT * FROM meta.numbers")))
"""


def test_a_forked_child_opens_its_own_hosts(warehouse, tmp_path):
    # forked from a process of one thread (a test worker's own threads could hold a lock at the
    # fork that the child then waits on forever: a hazard of fork, not of the hosts)
    script = tmp_path / "forked_child.py"
    script.write_text(FORKED_CHILD)
    done = subprocess.run(
        [sys.executable, str(script), str(warehouse.path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # the child exited cleanly and read the file; the parent's hosts still work after the fork
    assert done.stdout.split() == ["0", "10", "10"]


def test_idle_hosts_of_many_warehouses_are_closed(tmp_path):
    for i in range(attached.KEPT_HOSTS + 4):
        home = Warehouse(tmp_path / f"home{i}" / "stocker.duckdb")
        with home.connect() as con:
            con.execute("CREATE TABLE IF NOT EXISTS meta.one AS SELECT 1 AS x")
    assert len(attached.hosts().hosts) <= attached.KEPT_HOSTS


def test_the_read_host_reads_no_file_but_the_warehouse(warehouse, tmp_path):
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    with warehouse.read_only_connection() as con:
        with pytest.raises(duckdb.Error, match="disabled by configuration"):
            con.execute(f"SELECT * FROM read_csv('{outside}')").fetchall()
        with pytest.raises(duckdb.Error):
            con.execute(f"ATTACH '{tmp_path / 'other.duckdb'}' AS other")
