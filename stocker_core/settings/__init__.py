"""The settings by area: one pydantic model per area of the project (``home``, ``market``,
``sources``, ``env``, ``council``, ``ledger``, ``charts``, ``server``, ``runs``), each declaring
its fields (type, bounds, description) and validating them, and ``values``: how a ticker, a
month or a seed is spelt.

``stocker_core.config.Settings`` composes them into the one object every module reads, each
field still read from its ``STOCKER_<FIELD>`` variable and read flat (``settings.source``).

Why here and not beside each area's code (``stocker_core/market/``, ``stocker_core/council/``
…): every floor of the house reads the settings, so the settings sit on the lowest floor, and a
module on it cannot import an area package above it (``tests/test_import_layers.py``). These
modules import only pydantic, ``data_sources`` (the registry the source name is checked
against) and the value spellings (``values``), and each is named for the area it configures;
they are cheap, so the package imports them plainly.
"""

from stocker_core.settings.charts import ChartsSettings
from stocker_core.settings.council import CouncilSettings
from stocker_core.settings.env import EnvSettings
from stocker_core.settings.home import HomeSettings
from stocker_core.settings.ledger import LedgerSettings
from stocker_core.settings.market import MarketSettings
from stocker_core.settings.runs import RunSettings
from stocker_core.settings.server import ServerSettings
from stocker_core.settings.sources import SyntheticMarketSettings, YfinanceSettings

__all__ = [
    "ChartsSettings",
    "CouncilSettings",
    "EnvSettings",
    "HomeSettings",
    "LedgerSettings",
    "MarketSettings",
    "RunSettings",
    "ServerSettings",
    "SyntheticMarketSettings",
    "YfinanceSettings",
]
