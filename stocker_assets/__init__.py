"""The Dagster layer of Stocker: thin assets over stocker_core."""

import warnings

from dagster_shared.utils.warnings import BetaWarning, PreviewWarning

# We rely on single-run backfills, multi-partition mappings and partitioned checks on
# purpose; their beta/preview notices are not news to users.
# (Imported from dagster_shared, which `dagster` re-exports, so `stocker --help` stays fast.)
warnings.filterwarnings("ignore", category=BetaWarning)
warnings.filterwarnings("ignore", category=PreviewWarning)
