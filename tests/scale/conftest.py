"""Fixtures of tests/scale; the helpers they use live in services_testing.py."""

from collections.abc import Iterator

import pytest
from local_services import LocalServices
from services_testing import running_services


@pytest.fixture(scope="session")
def pg_redis() -> Iterator[LocalServices]:
    """One Postgres server and one Redis for the session (each test takes a fresh database)."""
    with running_services() as services:
        yield services
