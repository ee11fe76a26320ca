"""Fixtures of the web tests: one tiny warehouse per module (a copy of one built per test process)
and a client on the web app."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from web_testing import TinyHome, build_tiny_home, copy_tiny_home

from stocker_core.web.app import create_web_app


@pytest.fixture(scope="session")
def tiny_template(tmp_path_factory) -> TinyHome:
    """The tiny home built once per test process; never handed to a test (each module gets a copy)."""
    return build_tiny_home(tmp_path_factory.mktemp("web-template") / "home")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, tiny_template: TinyHome) -> TinyHome:
    """A tiny home of the module's own: a copy of the built one (tests may write into it)."""
    return copy_tiny_home(tiny_template, tmp_path_factory.mktemp("web") / "home")


@pytest.fixture(scope="module")
def client(tiny: TinyHome) -> TestClient:
    return TestClient(create_web_app(tiny.settings, api_key=""))
