"""Fixtures of the web tests: one tiny warehouse per module and a client on the web app."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from web_testing import TinyHome, build_tiny_home

from stocker_core.web.app import create_web_app


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> TinyHome:
    return build_tiny_home(tmp_path_factory.mktemp("web") / "home")


@pytest.fixture(scope="module")
def client(tiny: TinyHome) -> TestClient:
    return TestClient(create_web_app(tiny.settings, api_key=""))
