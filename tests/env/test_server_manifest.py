"""openenv.yaml describes the environment as it is: the app, the client and the models exist."""

from __future__ import annotations

import importlib
from pathlib import Path

import yaml
from fastapi import FastAPI

MANIFEST = Path(__file__).resolve().parents[2] / "openenv.yaml"


def _resolve(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def test_manifest_points_at_real_objects(seed_settings):
    manifest = yaml.safe_load(MANIFEST.read_text())
    assert manifest["spec_version"] == 1 and manifest["name"] == "stocker"
    assert manifest["runtime"] == "fastapi" and isinstance(manifest["port"], int)
    assert isinstance(_resolve(manifest["app"]), FastAPI)
    client = _resolve(manifest["client"])
    assert callable(client.reset) and callable(client.step) and callable(client.state)
    from stocker_core.env import actions, api_models

    assert getattr(actions, manifest["action"]).model_json_schema()["properties"]["side"]
    assert "headlines" in getattr(api_models, manifest["observation"]).model_fields
    assert set(manifest["tasks"]) == {"task_easy", "task_medium", "task_hard"}
    assert manifest["sessions"]["header"] == "X-Session-Id"
    assert manifest["auth"]["env"] == "STOCKER_API_KEY"
