"""Two clients at once never break the server (issue 34, defect 2): concurrent first reads of
the warehouse share one DuckDB configuration per process, so 2 threads x 25 ``/web/api/status``
and 14 concurrent first ``/reset``s answer 0 x 500, and the server answers normally afterwards."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from stocker_core.env.server import create_app
from stocker_core.warehouse.connections import slots
from stocker_core.web.app import create_web_app

MONTHS = [f"SYN|2015-{m:02d}-01" for m in range(2, 12)] + [f"SYN|2016-{m:02d}-01" for m in range(1, 5)]


def _status_burst(client: TestClient, threads: int = 2, each: int = 25) -> list[int]:
    def run(_: int) -> list[int]:
        return [client.get("/web/api/status").status_code for _ in range(each)]

    with ThreadPoolExecutor(threads) as pool:
        return [code for codes in pool.map(run, range(threads)) for code in codes]


def test_two_threads_of_status_get_no_500_and_the_server_stays_well(tiny) -> None:
    client = TestClient(create_web_app(tiny.settings, api_key=""))
    codes = _status_burst(client)
    assert codes == [200] * 50
    # and afterwards: single requests, an uncached reset, the health route
    assert client.get("/web/api/status").json()["counts"]["prices"] > 0
    assert client.post("/reset", json={"episode": MONTHS[0]}).status_code == 200
    assert client.get("/health").json()["status"] == "healthy"
    assert slots().mode(tiny.settings.warehouse_path) is None  # no connection left open


@pytest.mark.parametrize("with_web", [False, True])
def test_fourteen_concurrent_first_resets_answer_200(tiny, with_web: bool) -> None:
    app = create_web_app(tiny.settings, api_key="") if with_web else create_app(tiny.settings, api_key="")
    client = TestClient(app)

    def reset(key: str) -> int:
        return client.post("/reset", json={"episode": key}).status_code

    with ThreadPoolExecutor(14) as pool:
        resets = pool.map(reset, MONTHS[:14])
        reads = pool.map(lambda _: client.get("/web/api/status").status_code, range(14)) if with_web else []
        codes, read_codes = list(resets), list(reads)
    assert codes == [200] * 14
    assert read_codes == ([200] * 14 if with_web else [])
    assert client.post("/reset", json={"episode": MONTHS[0]}).status_code == 200


def test_a_failed_read_leaves_the_process_well(tiny) -> None:
    """A statement that fails on the shared read configuration closes its connection: the next
    reads (and a write in the same process) open normally."""
    from stocker_core.warehouse.read_only import ReadOnlyQueryError
    from stocker_core.web.reader import WarehouseReader

    reader = WarehouseReader(tiny.settings.warehouse_path)
    for _ in range(3):
        with pytest.raises(ReadOnlyQueryError):
            reader.frame("SELECT * FROM read_text('/etc/passwd')")
    assert reader.row_counts(["market.prices"])["market.prices"] > 0
    assert slots().mode(tiny.settings.warehouse_path) is None
    tiny.warehouse.ensure_schema()  # a write connection after the reads: no configuration conflict
    assert reader.has("market.prices")


def test_writes_and_hardened_reads_in_one_process_take_turns(tmp_path) -> None:
    """A race of the two configurations in one process: threads writing the catalog while
    others read through the locked read configuration all succeed (each waits its turn)."""
    from datetime import date

    from stocker_core.data_sources import SymbolInfo
    from stocker_core.warehouse import Warehouse
    from stocker_core.web.reader import WarehouseReader

    warehouse = Warehouse(tmp_path / "stocker.duckdb")
    warehouse.ensure_schema()
    reader = WarehouseReader(warehouse.path)

    def write(i: int) -> int:
        for j in range(10):
            warehouse.upsert_symbol("test", SymbolInfo(f"T{i}X{j}", date(2020, 1, 1), date(2020, 2, 1), True))
        return 10

    def read(_: int) -> int:
        return sum(reader.row_counts(["market.symbols"])["market.symbols"] >= 0 for _ in range(10))

    with ThreadPoolExecutor(4) as pool:
        writes = [pool.submit(write, i) for i in range(2)]
        reads = [pool.submit(read, i) for i in range(2)]
        assert [f.result() for f in writes + reads] == [10, 10, 10, 10]
    assert reader.row_counts(["market.symbols"])["market.symbols"] == 20
    assert slots().mode(warehouse.path) is None
