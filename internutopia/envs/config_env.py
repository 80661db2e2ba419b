"""The ``internutopia/Config-v0`` id's factories: a ``VectorEnv`` or ``FlatEnv`` of any ``Config`` or YAML config."""

from __future__ import annotations

from typing import Any


def make_config_vec(num_envs: int | None = None, config: Any = None, **kwargs: Any) -> Any:
    """A :class:`~internutopia.core.gym_vector.VectorEnv` of ``config`` (a ``Config`` or a YAML path)."""
    from internutopia.core.gym_vector import VectorEnv

    if config is None:
        raise TypeError("internutopia/Config-v0 needs config= (an internutopia Config or the path of a YAML config)")
    return VectorEnv(config, num_envs=num_envs, **kwargs)


def make_config(config: Any = None, render_mode: str | None = None, **kwargs: Any) -> Any:
    """The one-env :class:`~internutopia.core.gym_vector.FlatEnv` of ``config``."""
    from internutopia.core.gym_vector import FlatEnv

    if config is None:
        raise TypeError("internutopia/Config-v0 needs config= (an internutopia Config or the path of a YAML config)")
    return FlatEnv(config, render_mode=render_mode, **kwargs)


__all__ = ['make_config', 'make_config_vec']
