"""Market data: sources, trading calendar, indicators, charts, validation."""
