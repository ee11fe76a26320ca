"""Stocker core library: market data, warehouse, environment, council. Never imports dagster."""

__version__ = "0.1.0"
