"""The suite runs the same in every shell: the variables the project reads from the calling
shell (``STOCKER_*``, ``DAGSTER_HOME``, ``OPENAI_API_KEY``) are cleared before any test, so a
user of the files source (``STOCKER_FILES_DIR``) or of the CLI's Dagster instance sees what CI
sees. Tests that need one set it themselves (``monkeypatch.setenv``). Importing this module
clears them (``tests/conftest.py`` imports it first)."""

from __future__ import annotations

import os
from collections.abc import MutableMapping

PREFIX = "STOCKER_"
OTHERS = ("DAGSTER_HOME", "OPENAI_API_KEY")
"""Read by the project outside the prefix: the Dagster instance, the openai backend's fallback key."""
TEST_KNOBS = frozenset({"STOCKER_WEB_SCREENSHOTS", "STOCKER_CHROMIUM", "STOCKER_UPDATE_SNAPSHOT"})
"""Variables the tests themselves read (where screenshots go, which browser, refresh a
snapshot): options of the test run, never settings of the project, so they are kept."""


def shell_variables(environ: MutableMapping[str, str]) -> list[str]:
    """The names in ``environ`` the suite does not take from the calling shell."""
    return sorted(
        name for name in environ if (name.startswith(PREFIX) and name not in TEST_KNOBS) or name in OTHERS
    )


def clear_calling_shell(environ: MutableMapping[str, str] = os.environ) -> list[str]:
    """Remove ``shell_variables`` from ``environ`` (this process and those it starts); the names removed."""
    names = shell_variables(environ)
    for name in names:
        del environ[name]
    return names


CLEARED = clear_calling_shell()
"""What the calling shell had set that this run does not see."""
LEFT = shell_variables(os.environ)
"""What the run's environment holds of them right after clearing (nothing): later tests may set
some for themselves (a Dagster instance's ``DAGSTER_HOME``), so a test reads this, not ``os.environ``."""
