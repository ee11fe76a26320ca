"""Stocker's OpenEnv client distribution (``openenv-stocker``): what ``AutoEnv.from_env("stocker")``
finds. The client itself is ``stocker_core.env.openenv_client.StockerOpenEnv``."""
