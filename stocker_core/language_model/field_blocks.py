"""Blocks of configuration fields that several training configs share: declared once (type,
bounds, description), inherited by each config, each config with its own defaults."""

from __future__ import annotations

import typing
from typing import Any, Self

from pydantic import BaseModel, create_model


class FieldBlock(BaseModel):
    """A block of flat config fields (YAML keys, ``STOCKER_<AREA>_<FIELD>`` variables) for a
    config to inherit; ``with_defaults`` gives the same block with other defaults."""

    @classmethod
    def with_defaults(cls, **defaults: Any) -> type[Self]:
        """This block with ``defaults`` (field name -> value) in place of its own, every type,
        bound and description kept (they sit in each field's ``Annotated`` type)."""
        hints = typing.get_type_hints(cls, include_extras=True)
        unknown = set(defaults) - set(cls.model_fields)
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
        fields: dict[str, Any] = {name: (hints[name], value) for name, value in defaults.items()}
        return create_model(cls.__name__, __base__=cls, __module__=cls.__module__, **fields)
