"""The Definitions by domain: importing any module of ``stocker_assets.definitions`` builds and
registers nothing; ``build_definitions`` assembles every domain once; and what Dagster users and
stored runs depend on (asset keys, groups, partitions, dependencies, checks, jobs, schedules,
sensors, the order ``stocker materialize`` plans in) stays as the snapshot says.

After an intended change, rewrite the snapshot: ``STOCKER_UPDATE_SNAPSHOT=1 pytest`` this file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from stocker_assets.definitions.build import DOMAINS, build_definitions
from stocker_assets.definitions.partitions import ledger_session_partitions, ticker_month_partitions

SNAPSHOT = Path(__file__).parent / "snapshots" / "definitions.json"

PROBE = """
import importlib, json, pkgutil, sys
import stocker_assets.definitions as package
from stocker_core.env.policies import policy_names

skipped = ("location", "celery_definitions")
names = [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
for name in names:
    if name.rsplit(".", 1)[-1] not in skipped:
        importlib.import_module(name)
print(json.dumps({
    "imported": len(names) - len(skipped),
    "policies": policy_names(opt_in=True),
    "builders": [n for n in sys.modules if n.endswith(skipped)],
}))
"""


def test_importing_every_definitions_module_builds_and_registers_nothing():
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["imported"] >= 20
    assert probe["policies"] == []  # the composition root has not run: build_definitions runs it
    assert probe["builders"] == []


def _partitions(definition) -> str | None:
    known = {id(ticker_month_partitions): "ticker × month", id(ledger_session_partitions): "ledger_session"}
    return None if definition is None else known.get(id(definition), repr(definition))


def _snapshot(defs: dg.Definitions) -> dict:
    repo = defs.get_repository_def()
    assets = []
    for a in defs.assets:
        for key in a.keys:
            spec = a.specs_by_key[key]
            automation = spec.automation_condition
            assets.append(
                {
                    "key": key.to_user_string(),
                    "group": a.group_names_by_key[key],
                    "partitions": _partitions(a.partitions_def),
                    "deps": sorted(k.to_user_string() for k in a.asset_deps.get(key, set())),
                    "kinds": sorted(spec.kinds),
                    "pool": a.op.pool,
                    "op": a.op.name,
                    "automation": automation.get_label() if automation else None,
                    "single_run_backfill": a.backfill_policy == dg.BackfillPolicy.single_run(),
                    "code_version": bool(a.code_versions_by_key.get(key)),
                }
            )
    checks = sorted(
        (
            {
                "asset": spec.asset_key.to_user_string(),
                "name": spec.name,
                "op": c.node_def.name,
                "blocking": spec.blocking,
                "partitions": _partitions(getattr(c, "partitions_def", None)),
            }
            for c in defs.asset_checks or []
            for spec in c.check_specs
        ),
        key=lambda c: (c["asset"], c["name"]),
    )
    return {
        "assets": assets,
        "checks": checks,
        "jobs": {
            j.name: _partitions(j.partitions_def)
            for j in sorted(repo.get_all_jobs(), key=lambda j: j.name)
            if not j.name.startswith("__")
        },
        "schedules": {
            s.name: [s.cron_schedule, s.execution_timezone, s.job_name] for s in repo.schedule_defs
        },
        "sensors": sorted(s.name for s in repo.sensor_defs),
    }


def test_the_definitions_keep_their_names_partitions_and_order():
    found = _snapshot(build_definitions())
    if os.environ.get("STOCKER_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    assert found == json.loads(SNAPSHOT.read_text())


def test_every_domain_lists_what_it_defines():
    domains = [d.definitions() for d in DOMAINS]
    keys = [k for d in domains for a in d.assets for k in a.keys]
    assert len(keys) == len(set(keys)) == 20  # every asset in exactly one domain
    jobs = [j.name for d in domains for j in d.jobs or []]
    assert jobs == [
        "market_job",
        "env_job",
        "council_job",
        "evaluation_job",
        "training_job",
        "ledger_job",
        "ledger_scores_job",
    ]
