"""Compiled kernels (numba) against their numpy reference, and the switch that turns them off."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import internutopia.core.util.jit as jit
import internutopia.core.util.math as rotation_math
import internutopia_extension.controllers.base_motion as base_motion
import internutopia_extension.controllers.holonomic_base as holonomic_base
from internutopia.core.util.math import yaw_to_quat

# numba is a dependency wherever it is published (see pyproject.toml); there the kernels must run.
NUMBA_EXPECTED = sys.version_info < (3, 15) and os.environ.get(jit.ENV_SWITCH, '1') not in ('0', 'false', 'off', 'no')


def test_kernels_are_available_where_numba_is_a_dependency():
    assert base_motion._steer_kernel.available == NUMBA_EXPECTED
    assert holonomic_base._carry_kernel.available == NUMBA_EXPECTED


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('seed', range(5))
def test_steer_kernel_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    k = 97
    position = rng.normal(size=(k, 3))
    orientation = yaw_to_quat(rng.uniform(-np.pi, np.pi, k)) + rng.normal(scale=0.05, size=(k, 4))  # slightly tilted
    orientation /= np.linalg.norm(orientation, axis=1, keepdims=True)
    goal = position + rng.normal(scale=2.0, size=(k, 3))
    goal[:10, :2] = position[:10, :2] + 0.01  # within the threshold: these stop
    speeds = (float(rng.uniform(0.1, 2.0)), float(rng.uniform(0.1, 2.0)), 0.05)
    expected_velocity, expected_arrived = base_motion._steer_numpy(position, orientation, goal, *speeds)
    velocity, arrived = np.empty((k, 3)), np.empty(k, dtype=bool)
    base_motion._steer_kernel(position, orientation, goal, *speeds, velocity, arrived)
    np.testing.assert_array_equal(arrived, expected_arrived)
    assert arrived[:10].all() and not arrived[10:].all()
    np.testing.assert_allclose(velocity, expected_velocity, rtol=0, atol=1e-12)
    # The public function takes the compiled path here and gives the same answer.
    public_velocity, _ = base_motion.steer_towards(position, orientation, goal, *speeds)
    np.testing.assert_array_equal(public_velocity, velocity)


@pytest.mark.skipif(not NUMBA_EXPECTED, reason='numba is not a dependency on this Python')
@pytest.mark.parametrize('slots', [np.arange(8), np.array([1, 4, 6])], ids=['every slot', 'some slots'])
def test_carry_kernel_matches_numpy(slots):
    rng = np.random.default_rng(3)
    # The world's mocap arrays are strided views of the batch's state rows: build them the same way.
    state = rng.normal(size=(8, 40))
    mocap_pos = state[:, 5:17].reshape(8, 2, 6)[:, :, :3]
    mocap_quat = state[:, 20:28].reshape(8, 2, 4)
    mocap_quat[:] = yaw_to_quat(rng.uniform(-np.pi, np.pi, (8, 2)))
    before_pos, before_quat = mocap_pos.copy(), mocap_quat.copy()
    expected_pos, expected_quat = mocap_pos.copy(), mocap_quat.copy()
    velocity = rng.normal(size=(len(slots), 3))
    for _ in range(50):
        holonomic_base._carry_numpy(expected_pos, expected_quat, slots, 1, velocity, 1 / 240)
        holonomic_base._carry_kernel(mocap_pos, mocap_quat, slots, 1, velocity, 1 / 240)
    np.testing.assert_allclose(mocap_pos, expected_pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mocap_quat, expected_quat, rtol=0, atol=1e-12)
    assert not np.allclose(mocap_pos[slots, 1], before_pos[slots, 1])  # the commanded targets moved
    others = np.ones((8, 2), dtype=bool)
    others[slots, 1] = False
    np.testing.assert_array_equal(mocap_pos[others], before_pos[others])  # every other target stayed
    np.testing.assert_array_equal(mocap_quat[others], before_quat[others])


def test_switch_off_runs_numpy_with_the_same_motion():
    """``INTERNUTOPIA_JIT=0`` uses the numpy path; H1 follows the same path either way."""
    script = textwrap.dedent('''
        import json, numpy as np
        from internutopia.core.config import Config, SimConfig
        from internutopia.core.util import jit
        from internutopia.core.vec_env import Env
        from internutopia_extension import import_extensions
        from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_along_path_cfg, move_by_speed_cfg
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
        import_extensions()
        task = SingleInferenceTaskCfg(robots=[H1RobotCfg(controllers=[move_by_speed_cfg, move_along_path_cfg])])
        env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=2,
                         metrics_save_path='none', task_configs=[task] * 2))
        env.reset()
        path = np.tile(np.array([[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]]), (2, 1, 1))
        for _ in range(120):
            out = env.step_arrays({'h1': {'move_along_path': path}})
        print(json.dumps({'jit': jit.enabled(), 'position': out.obs['h1']['position'].tolist()}))
        env.close()
    ''')
    results = {}
    for switch in ('0', '1'):
        run = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=300,
                             env={**os.environ, jit.ENV_SWITCH: switch, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')})
        assert run.returncode == 0, run.stderr[-2000:]
        results[switch] = json.loads(run.stdout.strip().splitlines()[-1])
    assert results['0']['jit'] is False
    assert results['1']['jit'] is NUMBA_EXPECTED
    off, on = np.array(results['0']['position']), np.array(results['1']['position'])
    assert np.linalg.norm(off[:, :2], axis=1).min() > 0.3  # the robots did walk
    np.testing.assert_allclose(on, off, atol=1e-6)


def test_module_examples():
    for module in (jit, rotation_math, base_motion):
        failures, _ = doctest.testmod(module)
        assert failures == 0, module.__name__
