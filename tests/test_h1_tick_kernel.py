"""H1's compiled walking tick (``h1_locomotion/tick_kernel.py``) against the numpy tick it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.util import jit
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.controllers.h1_leg_action import H1LegActionControllerCfg
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_along_path_cfg, move_by_speed_cfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

pytestmark = pytest.mark.skipif(not jit.enabled(), reason='the compiled tick needs numba (a dependency where published)')

SCENE = gm.ASSET_PATH + '/scenes/empty.usd'


def _env(env_num: int, numpy: bool, **robot) -> Env:
    return _walking_env(H1RobotCfg(locomotion='walking', position=(0.0, 0.0, 1.05), **robot), env_num, numpy, 1 / 240)


def _walking_env(robot_cfg, env_num: int, numpy: bool, physics_dt: float = 1 / 200) -> Env:
    """``env_num`` slots of ``robot_cfg``, after their reset; ``numpy``: built without the compiled kernels."""
    task = SingleInferenceTaskCfg(scene_asset_path=SCENE, robots=[robot_cfg])
    config = Config(simulator=SimConfig(physics_dt=physics_dt), env_num=env_num, env_offset_size=3.0,
                    metrics_save_path='none', task_configs=[task] * env_num)
    if numpy:
        with jit.numpy_only():
            env = Env(config)
            env.reset()
        return env
    env = Env(config)
    env.reset()
    return env


def _assert_walk_the_same(compiled, reference) -> None:
    """The walkers of three slots acted (the policy did) and left the same arrays, servo targets,
    positions and observations, to the bit."""
    for name in ('action', 'last_action', 'followed', 'phase'):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(reference, name), err_msg=name)
    assert np.abs(reference.action).max() > 0.05  # the policy did act
    np.testing.assert_array_equal(compiled.data.ctrl, reference.data.ctrl)
    np.testing.assert_array_equal(compiled.data.qpos, reference.data.qpos)
    slots = np.array([2, 0])
    np.testing.assert_array_equal(compiled.observe(slots), reference.observe(slots))


def _walker(env: Env):
    return env.runner.slot_robots[0]['h1'].walker


@pytest.mark.parametrize('symmetric', [True, False])
def test_compiled_tick_walks_the_same_as_numpy_bit_for_bit(symmetric):
    """The shipped policy (mirror mean or not) driven by changing speed commands: same servo targets,
    actions, clocks, observations and positions after 300 steps (62 ticks), to the bit."""
    envs = [_env(3, numpy, controllers=[move_by_speed_cfg, move_along_path_cfg], walking_policy_symmetric=symmetric)
            for numpy in (True, False)]
    try:
        reference, compiled = (_walker(env) for env in envs)
        assert reference.compiled is None and compiled.compiled is not None
        assert compiled.stand_hold is None  # H1's policy stands still alone: no hold, the compiled tick
        speeds = np.array([[0.6, 0.0, 0.3], [0.0, -0.4, 0.0], [0.0, 0.0, 0.0]])
        for i in range(300):
            velocity = speeds if i < 200 else speeds[::-1] * 0.5  # a change of command mid-run
            for env in envs:
                env.step_arrays({'h1': {'move_by_speed': velocity}})
        _assert_walk_the_same(compiled, reference)
    finally:
        for env in envs:
            env.close()


def test_compiled_tick_takes_a_training_loops_actions_as_numpy_does():
    """``walking_policy='controller'``: the leg actions a training loop sends (some beyond [-1, 1])."""
    envs = [_env(2, numpy, controllers=[H1LegActionControllerCfg()], walking_policy='controller') for numpy in (True, False)]
    try:
        rng = np.random.default_rng(3)
        for _ in range(30):
            action = rng.uniform(-1.5, 1.5, (2, 10))
            for env in envs:
                env.step_arrays({'h1': {'leg_action': action}})
        reference, compiled = (_walker(env) for env in envs)
        assert compiled.compiled is not None
        np.testing.assert_array_equal(compiled.action, reference.action)
        np.testing.assert_array_equal(compiled.data.ctrl, reference.data.ctrl)
        np.testing.assert_array_equal(compiled.data.qpos, reference.data.qpos)
    finally:
        for env in envs:
            env.close()


@pytest.mark.parametrize('robot', ['aliengo', 'gr1'])
def test_the_compiled_tick_serves_every_gait_bit_for_bit(robot):
    """Aliengo's trot (12 legs' joints, a quadruped's mirror) and GR1's gait with its stand hold
    (told to stand, a GR1 is led back to the spot it stopped at, worked out between the two
    passes): the same servo targets, actions, clocks, held spots and positions as the numpy tick."""
    if robot == 'aliengo':
        from internutopia_extension.configs.robots.aliengo import AliengoRobotCfg
        from internutopia_extension.configs.robots.aliengo import move_by_speed_cfg as speed
        cfg = AliengoRobotCfg(controllers=[speed])
    else:
        from internutopia_extension.configs.robots.gr1 import GR1RobotCfg
        from internutopia_extension.configs.robots.gr1 import move_by_speed_cfg as speed
        cfg = GR1RobotCfg(controllers=[speed])
    envs = [_walking_env(cfg, 3, numpy) for numpy in (True, False)]
    try:
        reference, compiled = (env.runner.slot_robots[0][robot].walker for env in envs)
        assert reference.compiled is None and compiled.compiled is not None
        assert (compiled.stand_hold is not None) == (robot == 'gr1')
        speeds = np.array([[0.6, 0.0, 0.3], [0.0, -0.3, 0.0], [0.4, 0.2, -0.5]])
        for i in range(400):
            velocity = speeds if i < 200 else np.zeros_like(speeds)  # then told to stand: the hold's part
            for env in envs:
                env.step_arrays({robot: {'move_by_speed': velocity}})
        _assert_walk_the_same(compiled, reference)
        if robot == 'gr1':
            np.testing.assert_array_equal(compiled.stand_hold.anchor, reference.stand_hold.anchor)
            assert (reference.stand_hold.standing_for > 0.0).all()  # (every GR1 stood and was held)
    finally:
        for env in envs:
            env.close()
