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
