"""Many writers: processes fill partitions at once while another process queries the views."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from stocker_core.warehouse import Warehouse

WRITERS = 2
OWN_TICKERS = 10
MONTHS = 20  # 10 tickers x 20 months = 200 partitions of its own per writer
SHARED = ("SHR1", "SHR2")  # both writers also rewrite these 2 x 20 partitions

# One writer process: its own partitions, the shared ones (same rows from both writers,
# so a duplicate would show), and one vote per partition of a shared ticker (an upsert:
# both writers' votes must survive). Prints JSON: partitions written, errors.
WRITER = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[3])
    import pandas as pd
    from warehouse_testing import month_bars, months
    from stocker_core.council.cache import VoteCache
    from stocker_core.council.models import SpecialistVote
    from stocker_core.warehouse import Warehouse

    path, writer = sys.argv[1], int(sys.argv[2])
    own, n_months, shared = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6].split(",")
    warehouse = Warehouse(path)
    cache = VoteCache(warehouse)
    written, errors = 0, []
    jobs = [(f"W{writer}T{i}", m) for i in range(own) for m in months("2020-01-01", n_months)]
    jobs += [(t, m) for t in shared for m in months("2020-01-01", n_months)]
    for ticker, month in jobs:
        try:
            seed = 0 if ticker in shared else writer
            warehouse.replace_months("market.prices", ticker, [month], month_bars(ticker, month, seed))
            written += 1
            if ticker in shared:
                day = pd.Timestamp(month) + pd.offsets.BDay(1)
                vote = SpecialistVote(role="technical", signal=0.1, confidence=0.5, rationale="x")
                cache.store(ticker, "rule", f"writer{writer}", [(day, vote, "v1")])
        except Exception as exc:  # counted, not raised: the test reports every error
            errors.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps({"written": written, "errors": errors}))
    """
)


@pytest.mark.slow
def test_two_writers_and_a_reader_never_collide(tmp_path):
    path = tmp_path / "stocker.duckdb"
    warehouse = Warehouse(path)
    warehouse.ensure_schema()
    here = str(Path(__file__).parent)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(path),
                str(w),
                here,
                str(OWN_TICKERS),
                str(MONTHS),
                ",".join(SHARED),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    reads, read_errors, duplicates = 0, [], 0
    reader = Warehouse(path)
    while any(p.poll() is None for p in procs):
        try:
            rows, distinct = reader.query(
                "SELECT count(*) AS n, count(DISTINCT (ticker, date)) AS d FROM market.prices"
            ).iloc[0]
            duplicates += int(rows != distinct)
            reads += 1
        except Exception as exc:
            read_errors.append(f"{type(exc).__name__}: {exc}")
        time.sleep(0.02)
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))

    per_writer = OWN_TICKERS * MONTHS + len(SHARED) * MONTHS
    assert [r["errors"] for r in reports] == [[]] * WRITERS  # 0 lock errors
    assert [r["written"] for r in reports] == [per_writer] * WRITERS
    assert read_errors == [] and reads >= 3 and duplicates == 0
    assert warehouse.parts.leftover_temp_files() == []

    tickers = WRITERS * OWN_TICKERS + len(SHARED)
    parts = warehouse.parts.partitions(warehouse_table("market.prices"))
    assert len(parts) == tickers * MONTHS  # 440 partitions, each exactly once
    stats = warehouse.query(
        "SELECT count(*) AS n, count(DISTINCT (ticker, date)) AS d, count(DISTINCT ticker) AS t, "
        "count(*) FILTER (WHERE close IS NULL) AS nulls FROM market.prices"
    ).iloc[0]
    assert stats["n"] == stats["d"] and stats["t"] == tickers and stats["nulls"] == 0
    # every row readable: each partition holds exactly its month's business days
    per_month = warehouse.query(
        "SELECT ticker, date_trunc('month', date) AS m, count(*) AS n FROM market.prices GROUP BY ALL"
    )
    assert len(per_month) == tickers * MONTHS and per_month["n"].between(20, 23).all()
    # the shared partitions hold the same rows whoever wrote last, and both writers' votes survive
    votes = warehouse.query(
        "SELECT ticker, model_id, count(*) AS n FROM council.votes GROUP BY ALL ORDER BY ALL"
    )
    assert votes["n"].tolist() == [MONTHS] * (len(SHARED) * WRITERS)


def warehouse_table(name: str):
    from stocker_core.warehouse.schema import PARTITIONED

    return PARTITIONED[name]
