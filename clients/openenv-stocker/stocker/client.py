"""The names openenv 0.10's AutoEnv imports from ``stocker.client``: the client class it infers
from the manifest's name (``StockerEnv``) and the manifest's ``action`` and ``observation``
classes (``Action``, ``ObservationModel``)."""

from stocker_core.env.actions import Action
from stocker_core.env.api_models import ObservationModel, StateModel
from stocker_core.env.openenv_client import StockerOpenEnv

StockerEnv = StockerOpenEnv

__all__ = ["Action", "ObservationModel", "StateModel", "StockerEnv", "StockerOpenEnv"]
