"""The ``internutopia/Config-v0`` id's factories: a ``VectorEnv`` or ``FlatEnv`` of any ``Config`` or YAML config.

``metrics_save_path=`` replaces the config's (in a copy): an env locks its metrics file while it is
open, so envs built side by side from one config that names a file (``gymnasium.make_vec(...,
vectorization_mode='sync')`` or ``'async'``, one world per env; Gymnasium's ``check_env``, which
builds a second env from the spec) need ``'none'``, ``'console'`` or a file each.
"""

from __future__ import annotations

from typing import Any


def _config(config: Any, metrics_save_path: str | None) -> Any:
    """``config`` (a ``Config`` or a YAML path), with ``metrics_save_path`` in a copy when given."""
    if config is None:
        raise TypeError("internutopia/Config-v0 needs config= (an internutopia Config or the path of a YAML config)")
    if metrics_save_path is None:
        return config
    from internutopia.core.gym_vector.arguments import resolve_config

    return resolve_config(config, None).update(metrics_save_path=metrics_save_path)


def make_config_vec(num_envs: int | None = None, config: Any = None, metrics_save_path: str | None = None,
                    **kwargs: Any) -> Any:
    """A :class:`~internutopia.core.gym_vector.VectorEnv` of ``config`` (a ``Config`` or a YAML path)."""
    from internutopia.core.gym_vector import VectorEnv

    return VectorEnv(_config(config, metrics_save_path), num_envs=num_envs, **kwargs)


def make_config(config: Any = None, render_mode: str | None = None, metrics_save_path: str | None = None,
                **kwargs: Any) -> Any:
    """The one-env :class:`~internutopia.core.gym_vector.FlatEnv` of ``config``."""
    from internutopia.core.gym_vector import FlatEnv

    return FlatEnv(_config(config, metrics_save_path), render_mode=render_mode, **kwargs)


__all__ = ['make_config', 'make_config_vec']
