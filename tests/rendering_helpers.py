"""Helpers of the rendering and camera tests: an env of given tasks, a scene file fixture, a yaw
as a quaternion, the PSNR of two images."""

from __future__ import annotations

import math
import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402


def make_env(tasks, env_num, offset=5.0, **sim):
    """An env of ``tasks`` in ``env_num`` slots ``offset`` apart (``sim``: SimConfig fields), stepped at 240 Hz."""
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240, **sim), env_num=env_num, env_offset_size=offset,
                      metrics_save_path='none', task_configs=list(tasks)))


def scene_file_fixture(xml: str, name: str):
    """A module-scoped fixture giving the path of a scene file ``name`` that holds ``xml``."""

    @pytest.fixture(scope='module')
    def scene(tmp_path_factory):
        path = tmp_path_factory.mktemp('scenes') / name
        path.write_text(xml)
        return str(path)

    return scene


def yaw_quat(degrees):
    """wxyz of a turn of ``degrees`` about z."""
    half = math.radians(degrees) / 2
    return (math.cos(half), 0.0, 0.0, math.sin(half))


def psnr(a, b):
    """Peak signal-to-noise ratio (dB) of two 8-bit images; infinite when they are equal."""
    mse = np.mean((a.astype(float) - b.astype(float)) ** 2)
    return 10 * math.log10(255.0 ** 2 / mse) if mse > 0 else math.inf
