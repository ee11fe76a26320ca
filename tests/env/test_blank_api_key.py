"""A whitespace-only (or whitespace-padded) API key is refused when the server is configured,
on loopback and off it, for ``stocker serve``, ``stocker web`` and the apps (issue 22, defect 7)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from stocker_core.cli import build_app
from stocker_core.env.server import ServerConfigError, check_bind, checked_api_key, create_app
from stocker_core.web.app import create_web_app

BLANKS = [" ", "   ", "\t", "\n", " \t\r\n "]


@pytest.mark.parametrize("key", BLANKS)
def test_a_blank_key_is_refused_everywhere(seed_settings, monkeypatch, key):
    with pytest.raises(ServerConfigError, match="blank"):
        checked_api_key(key)
    for host in ("0.0.0.0", "127.0.0.1", "192.168.1.5"):
        with pytest.raises(ServerConfigError, match="blank"):
            check_bind(host, key, insecure_no_auth=False)
    with pytest.raises(ServerConfigError, match="blank"):
        create_app(seed_settings, api_key=key)
    monkeypatch.setenv("STOCKER_API_KEY", key)
    with pytest.raises(ServerConfigError, match="blank"):
        create_app(seed_settings)
    with pytest.raises(ServerConfigError, match="blank"):
        create_web_app(seed_settings)


def test_a_padded_key_is_refused_and_real_or_absent_keys_pass():
    with pytest.raises(ServerConfigError, match="whitespace"):
        checked_api_key(" s3cret ")
    assert checked_api_key("s3cret") == "s3cret"
    assert checked_api_key("") == "" and checked_api_key(None) == ""


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_the_commands_exit_2_with_a_clear_error(seed_settings, monkeypatch, host):
    monkeypatch.setenv("STOCKER_API_KEY", "   ")
    app = build_app()  # the core `stocker` commands, wherever an area registers them
    served = CliRunner().invoke(app, ["serve", "--host", host, "--port", "1"])
    assert served.exit_code == 2 and "API key is blank" in served.output
    web = CliRunner().invoke(app, ["web", "--host", host, "--port", "1", "--no-open"])
    assert web.exit_code == 2 and "API key is blank" in web.output
