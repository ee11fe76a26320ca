"""Issue 41, a first screen that works: the key field suggests a key of the home's own data, and
the charts' y ticks read apart (the Forward view's equity near 1.0 read "1.00" on every tick)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from stocker_core.config import Settings
from stocker_core.env.tasks import TASKS
from stocker_core.warehouse.db import Warehouse
from stocker_core.web.app import create_web_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluation"))
from evaluation_testing import store_prices, synthetic_prices  # noqa: E402

STATIC = Path(__file__).resolve().parents[2] / "stocker_core" / "web" / "static"
TASK_KEY = TASKS["task_easy"].key


def _plays(client: TestClient, key: str) -> bool:
    return client.post("/web/api/play", json={"episode": key}).status_code == 200


def test_the_example_key_is_a_stored_episode(client, tiny):
    choices = client.get("/web/api/choices").json()
    assert choices["example_key"] == "SYN|2015-03-01" and _plays(client, choices["example_key"])


def test_the_example_key_without_episodes_is_a_month_of_stored_bars(tmp_path):
    settings = Settings(home=tmp_path / "home")
    store_prices(Warehouse(settings.warehouse_path), synthetic_prices(days=400))
    client = TestClient(create_web_app(settings, api_key=""))
    key = client.get("/web/api/choices").json()["example_key"]
    assert key.startswith("SYN|") and key != TASK_KEY and _plays(client, key)


def test_the_example_key_of_an_empty_home_is_a_reference_task(tmp_path):
    client = TestClient(create_web_app(Settings(home=tmp_path / "home"), api_key=""))
    assert client.get("/web/api/choices").json()["example_key"] == TASK_KEY
    assert _plays(client, TASK_KEY)


def test_no_page_suggests_a_key_outside_the_data(client):
    for view in ("episode", "council"):
        html = client.get(f"/web/{view}").text
        assert f'placeholder="{TASK_KEY}"' in html and "2012-03-01" not in html
    assert "keyInput.placeholder = choices.example_key" in (STATIC / "common.js").read_text()


HARNESS = r"""
const fs = require("fs");
function node(tag) {
  return { tag, attrs: {}, children: [], setAttribute(k, v) { this.attrs[k] = String(v); },
    append(...c) { this.children.push(...c); }, replaceChildren(...c) { this.children = c; },
    addEventListener() {} };
}
global.document = { createElementNS: (ns, tag) => node(tag), createTextNode: (text) => ({ text }) };
eval(fs.readFileSync(process.argv[2], "utf8").replace('"use strict";', ""));
const out = {};
for (const [name, values, percent] of JSON.parse(process.argv[3])) {
  const box = node("div");
  lineChart(box, [{ name: "p", values, style: "solid", cls: "c0" }], values.map((_, i) => String(i)),
    percent ? { yFormat: tickPercentFrom(1.0) } : {});
  out[name] = box.children[0].children
    .filter((c) => c.tag === "text" && c.attrs.class === "tick" && c.attrs["text-anchor"] === "end")
    .map((c) => c.children[0].text);
}
console.log(JSON.stringify(out));
"""

CASES = [
    ("forward equity", [1.0, 0.9987, 1.0012, 1.0031, 1.0024], True),
    ("forward equity as numbers", [1.0, 0.9987, 1.0012, 1.0031, 1.0024], False),
    ("a flat forward record", [1.0, 1.00001, 0.99998, 1.00003], True),
    ("portfolio value", [10_000.0, 9_991.5, 10_004.2, 10_012.0], False),
    ("a big account", [10_000.0, 8_745.6, 12_340.0], False),
    ("a loss curve", [1.5, 0.75, 0.5], False),
]


@pytest.mark.skipif(shutil.which("node") is None, reason="no node to run the page's chart script")
def test_y_ticks_read_apart(tmp_path):
    script = tmp_path / "ticks.js"
    script.write_text(HARNESS)
    cases = json.dumps(CASES)
    done = subprocess.run(
        ["node", str(script), str(STATIC / "charts.js"), cases], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    ticks = json.loads(done.stdout)
    for name, labels in ticks.items():
        assert len(labels) >= 3 and len(set(labels)) == len(labels), (name, labels)
    assert ticks["forward equity"] == ["−0.1%", "0.0%", "+0.1%", "+0.2%", "+0.3%"]
    assert ticks["forward equity as numbers"] == ["0.999", "1.000", "1.001", "1.002", "1.003"]
    assert ticks["portfolio value"] == ["9,995", "10,000", "10,005", "10,010"]
