"""Assets grouped by concept."""
