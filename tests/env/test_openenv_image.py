"""deploy/Dockerfile is an OpenEnv image, read without Docker (no engine here): its default
command serves the environment on 0.0.0.0:8000 as a non-root user, with a health check, and
every folder a process writes is under /tmp (the one writable folder of `docker run --read-only
--tmpfs /tmp`, and of `openenv validate . --level runtime`). tests/env/test_openenv_live.py
starts that command outside Docker."""

from __future__ import annotations

import yaml
from openenv_package_testing import DOCKERFILE, ROOT, env_of, exec_form, instructions

from stocker_core.env.server import check_bind

WRITABLE = ("STOCKER_HOME", "DAGSTER_HOME", "HOME", "XDG_CACHE_HOME", "MPLCONFIGDIR", "HF_HOME")
WRITABLE += ("NUMBA_CACHE_DIR",)


def _last(keyword: str) -> str:
    found = [rest for key, rest in instructions() if key == keyword]
    assert found, f"deploy/Dockerfile has no {keyword}"
    return found[-1]


def test_the_default_command_serves_on_0_0_0_0_port_8000() -> None:
    argv = exec_form(_last("CMD"))
    assert argv[:2] == ["stocker", "serve"]
    options = dict(zip(argv[2::], argv[3::], strict=False))
    assert options["--host"] == "0.0.0.0" and options["--port"] == "8000"
    assert "8000" in _last("EXPOSE").split()
    # it starts without a key (the validator sends none) and requires one when STOCKER_API_KEY is set
    check_bind("0.0.0.0", None, insecure_no_auth="--insecure-no-auth" in argv)


def test_the_command_flags_are_stocker_serves() -> None:
    import typer.main

    from stocker_assets.cli import app

    command = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    flags = [arg for arg in exec_form(_last("CMD"))[2:] if arg.startswith("--")]
    assert set(flags) <= known, set(flags) - known


def test_it_runs_as_a_non_root_user() -> None:
    user = _last("USER").split(":")[0]
    assert user not in ("root", "0") and user.isdigit() and int(user) >= 1000


def test_a_health_check_asks_health() -> None:
    check = _last("HEALTHCHECK")
    assert "CMD" in check and "http://127.0.0.1:8000/health" in check


def test_everything_written_goes_under_tmp() -> None:
    env = env_of()
    for key in WRITABLE:
        assert env[key].startswith("/tmp/") or env[key] == "/tmp", key
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["STOCKER_SOURCE"] == "sample"
    assert any(key == "RUN" and "compileall" in rest for key, rest in instructions())


def test_what_it_copies_passes_its_dockerignore() -> None:
    allowed = {
        line.removeprefix("!").rstrip("/")
        for line in (DOCKERFILE.parent / "Dockerfile.dockerignore").read_text().splitlines()
        if line.startswith("!")
    }
    copied = [rest.split()[:-1] for key, rest in instructions() if key == "COPY"]
    for sources in copied:
        for source in sources:
            assert source.rstrip("/") in allowed and (ROOT / source).exists(), source


def test_openenv_yaml_names_this_dockerfile_and_the_compose_services_set_their_command() -> None:
    execution = yaml.safe_load((ROOT / "openenv.yaml").read_text())["validation"]["execution"]
    assert (ROOT / execution["context"] / execution["dockerfile"]).resolve() == DOCKERFILE
    compose = yaml.safe_load((DOCKERFILE.parent / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        if service.get("build", {}).get("dockerfile") == "deploy/Dockerfile":
            assert service.get("command"), f"{name} would run the image's default command (the server)"
