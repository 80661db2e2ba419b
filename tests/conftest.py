"""Shared fixtures: configs built on the jetbot (fast) and the H1."""

from __future__ import annotations

import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import pytest  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402

import_extensions()

# Property-based tests (tests/test_properties.py): CI runs a fixed, bounded set of examples;
# HYPOTHESIS_PROFILE=dev explores many more.
from hypothesis import settings  # noqa: E402

settings.register_profile('ci', max_examples=40, derandomize=True, deadline=None, print_blob=True)
settings.register_profile('dev', max_examples=1000, deadline=None)
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'ci'))


@pytest.fixture
def make_config():
    """Build a Config of ``tasks`` with ``env_num`` slots, results discarded."""

    def make(tasks, env_num=2, offset=5.0, **kw):
        kw.setdefault('metrics_save_path', 'none')
        return Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, env_offset_size=offset,
                      task_configs=list(tasks), **kw)

    return make


def _env_classes() -> list[type]:
    from internutopia.core import gym_env, vec_env
    from internutopia.core.gym_vector import FlatEnv, VectorEnv

    return [vec_env.Env, gym_env.Env, VectorEnv, FlatEnv]


@pytest.fixture(autouse=True)
def close_every_env_the_test_opens(monkeypatch):
    """Every env a test builds (``vec_env.Env``, a Ray ``DistributedEnv``, ``gym_env.Env``,
    ``VectorEnv``, ``FlatEnv``) is closed when the test ends, passed or failed: a failed assert
    leaks no world, render thread or Ray actor into the tests after it. (Closing is idempotent, so
    tests that close their envs themselves, or use ``with``, are unaffected.)"""
    opened: list = []
    for cls in _env_classes():
        original = cls.__init__

        def init(self, *args, _original=original, **kwargs):
            opened.append(self)
            _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, '__init__', init)
    yield
    for env in reversed(opened):
        try:
            env.close()
        except Exception:  # noqa: BLE001 - half-built by a failing constructor, or already torn down
            pass
