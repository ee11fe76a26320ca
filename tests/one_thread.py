"""One CPU thread per test process: the suite runs a worker per core (``-n auto``), so a torch
(OpenMP) pool of a thread per core in every worker, and in every process the tests start, puts
twice the threads on the cores, and the idle ones spin: a tiny model's fit costs 1.8× the
CPU-seconds with two threads on this 2-core box, and runs slower. Set before torch is imported
(``tests/conftest.py`` imports this first); the processes the tests start inherit it. A test that
needs more threads sets them itself."""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
