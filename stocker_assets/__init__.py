"""The Dagster layer of Stocker: thin assets over stocker_core."""

import warnings

import dagster as dg

# We rely on single-run backfills, multi-partition mappings and partitioned checks on
# purpose (see DAGSTER_NOTES.md); their beta/preview notices are not news to users.
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)
