"""``--forwarded-allow-ips`` (issue 52): ``stocker serve`` (with and without the page) and
``stocker web`` run uvicorn with its proxy headers off unless proxies are named — uvicorn's own
``FORWARDED_ALLOW_IPS`` in the environment turns nothing on — and a bad entry is one line,
exit 2. The live cases (spoofed headers, a named proxy) are in ``test_peer_addresses.py``."""

from __future__ import annotations

import pytest
import uvicorn
from stocker_testing import SEED_DIR
from typer.testing import CliRunner

from stocker_core.cli import app
from stocker_core.config import get_settings
from stocker_core.env.proxies import proxy_options, trusted_proxies
from stocker_core.env.server import ServerConfigError

COMMANDS = [["serve"], ["serve", "--no-web"], ["web", "--no-open"]]


@pytest.fixture
def served(monkeypatch, tmp_path) -> list[dict]:
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(SEED_DIR))
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")  # uvicorn's own: not ours to read
    get_settings(fresh=True)
    calls: list[dict] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append(kwargs))
    yield calls
    monkeypatch.undo()
    get_settings(fresh=True)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_no_proxy_is_believed_unless_named(served, command) -> None:
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    assert served[-1]["proxy_headers"] is False
    result = CliRunner().invoke(app, [*command, "--forwarded-allow-ips", "127.0.0.1, 10.0.0.0/8"])
    assert result.exit_code == 0, result.output
    assert served[-1]["proxy_headers"] is True
    assert served[-1]["forwarded_allow_ips"] == "127.0.0.1,10.0.0.0/8"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("value", ["nope", "127.0.0.1/33", "localhost", "127.0.0.1;rm"])
def test_a_bad_entry_is_one_line_and_exit_2(served, command, value) -> None:
    result = CliRunner().invoke(app, [*command, "--forwarded-allow-ips", value])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--forwarded-allow-ips" in result.output and served == []


def test_the_options_uvicorn_gets() -> None:
    assert proxy_options(None) == {"proxy_headers": False, "forwarded_allow_ips": None}
    assert proxy_options(" , ") == {"proxy_headers": False, "forwarded_allow_ips": None}
    assert proxy_options("*") == {"proxy_headers": True, "forwarded_allow_ips": "*"}
    assert trusted_proxies("::1, fd00::/8") == ["::1", "fd00::/8"]
    with pytest.raises(ServerConfigError, match="'10.0.0.300'"):
        trusted_proxies("127.0.0.1,10.0.0.300")
