"""Which config class validates a place in a config's data (a YAML file's mapping): used to name
the valid keys where a file or a ``--set`` override has an unknown one."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any


def model_in(annotation: Any) -> Any:
    """The first pydantic model class inside a type annotation (``list[X]``, ``Optional[X]``, ...)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = model_in(arg)
        if found is not None:
            return found
    return None


def model_at(data: Any, loc: Sequence[Any]) -> Any:
    """The config class that validates the mapping at ``loc`` (resolving ``type`` fields)."""
    from internutopia.core.config import Config, TypedCfg

    def refine(cls: Any, node: Any) -> Any:
        if cls is not None and issubclass(cls, TypedCfg) and isinstance(node, dict) and isinstance(node.get('type'), str):
            return cls.config_class_for(node['type']) or cls
        return cls

    cls: Any = Config
    node = data
    for part in loc:
        if cls is None:
            return None
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
        else:
            field = cls.model_fields.get(part)
            if field is None:
                return None
            cls = model_in(field.annotation)
            node = node.get(part) if isinstance(node, dict) else None
        cls = refine(cls, node)
    return cls


__all__ = ['model_at', 'model_in']
