"""Bytecode caches on, for the test process and every process the tests start (imported first
by conftest.py).

The install runs `pip install --no-compile`, so no module has a .pyc until a process writes
one. Where the shell sets PYTHONDONTWRITEBYTECODE (this project's development machines do),
each of the suite's hundreds of processes (CLI commands, lanes, servers, dagster dev) compiled
torch, transformers, Dagster and ours from source again: the README examples test took 54 s
instead of 33. The caches go where Python puts them (``__pycache__`` in the venv and the clone,
which git ignores).
"""

import os
import sys

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
