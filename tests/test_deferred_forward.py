"""A few slots' forward pass (a reset's) runs when a derived field is next read, not at the call
(``Pack.forward``): what is read is what the pass at the call would have written, and a reset
whose task and first observation read only the state costs no pass at all."""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import internutopia.core.backend.mujoco.pack as pack_module
import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

_MJ_FORWARD = mujoco.mj_forward  # (the tests count the pack's calls of it)


def _forward_at(pack, row: np.ndarray) -> mujoco.MjData:
    """What a forward pass of the state row ``row`` computes, on a fresh MjData."""
    data = mujoco.MjData(pack.model)
    mujoco.mj_setState(pack.model, data, row, mujoco.mjtState.mjSTATE_INTEGRATION)
    _MJ_FORWARD(pack.model, data)
    return data


def _count_passes(monkeypatch) -> list[int]:
    """Counts the forward passes the MuJoCo pack runs itself (it calls ``mujoco.mj_forward``)."""
    calls: list[int] = []

    def counted(model, data):
        calls.append(1)
        _MJ_FORWARD(model, data)

    monkeypatch.setattr(pack_module.mujoco, 'mj_forward', counted)
    return calls


def test_a_derived_field_read_after_a_forward_call_is_that_calls_pass_whatever_was_written_since(make_config, monkeypatch):
    env = Env(make_config([FiniteStepTaskCfg(max_steps=10_000, robots=[JetbotRobotCfg()])] * 3, env_num=3, offset=1.0))
    env.reset()
    for _ in range(20):
        env.step([{'jetbot': {'move_by_speed': [0.3, 0.5]}}] * 3)
    pack = env.runner.world.pack(0)
    xpos = pack.field('xpos')
    passes = _count_passes(monkeypatch)
    pack.data.qpos[1, :3] += (0.2, -0.1, 0.05)  # a written state: slot 1's derived fields are stale
    at_call = pack.batch.state[1].copy()
    env.runner.world.forward(np.array([1]))
    assert passes == []  # nothing computed yet
    pack.data.qpos[1, :2] += 0.3  # written after the call (the pass computes the state at the call)
    pack.data.qvel[1] += 0.1
    expected = _forward_at(pack, at_call)
    np.testing.assert_array_equal(pack.data.xpos[1], expected.xpos)  # the read runs the pass
    np.testing.assert_array_equal(pack.data.sensordata[1], expected.sensordata)
    assert passes == [1]
    np.testing.assert_array_equal(xpos[1], expected.xpos)  # (the array held from before shows it too)
    before_others = pack.data.xpos[[0, 2]].copy()
    assert passes == [1]  # run once
    np.testing.assert_array_equal(pack.data.xpos[[0, 2]], before_others)  # no other slot touched

    env.runner.world.forward(np.array([2]))
    pack.step()  # the step comes first: it computes every derived field itself, the pass never runs
    assert pack.data.sensordata is not None and passes == [1]
    stepped = pack.data.xpos[2].copy()
    pack.step()
    assert not np.array_equal(pack.data.xpos[2], stepped)  # (the step's own fields, refreshed by the next)
    env.close()


def test_binding_a_field_after_a_forward_call_runs_the_pending_pass_first(make_config):
    env = Env(make_config([FiniteStepTaskCfg(max_steps=10_000, robots=[JetbotRobotCfg()])] * 2, env_num=2, offset=1.0))
    env.reset()
    env.step([{'jetbot': {'move_by_speed': [0.3, 0.5]}}] * 2)
    pack = env.runner.world.pack(0)
    pack.data.qpos[0, :3] += (0.4, 0.1, 0.0)
    at_call = pack.batch.state[0].copy()
    env.runner.world.forward(np.array([0]))
    subtree_com = pack.field('subtree_com')  # first bound here
    np.testing.assert_array_equal(subtree_com[0], _forward_at(pack, at_call).subtree_com)
    env.close()


def _walk(deferred: bool, monkeypatch) -> tuple[list, list[int]]:
    """Every result of 120 random H1Walk-v0 vector steps (falls and time limits: many resets),
    with the forward passes deferred or run at each call; and the passes run."""
    with monkeypatch.context() as patch:
        patch.setattr(pack_module.Pack, 'defer_forward', deferred)
        passes = _count_passes(patch)
        env = gym.make_vec('internutopia/H1Walk-v0', num_envs=4, seconds=0.3)
        results = [env.reset(seed=2)]
        rng = np.random.default_rng(4)
        for _ in range(120):
            results.append(env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)))
        env.close()
    return results, passes


def test_the_walking_envs_resets_run_no_forward_pass_and_give_the_same_results(monkeypatch):
    from tests.test_fused_steps import _same

    at_once, passes_at_once = _walk(False, monkeypatch)
    deferred, passes_deferred = _walk(True, monkeypatch)
    assert len(passes_at_once) >= 20  # (one per reset slot: the time limit ends an episode every 15 actions)
    assert passes_deferred == []  # its task and observation read the state only
    assert _same(at_once, deferred)


@pytest.mark.parametrize('env_id', ['internutopia/AliengoWalk-v0', 'internutopia/GR1Walk-v0'])
def test_the_other_walking_envs_resets_run_no_forward_pass(env_id, monkeypatch):
    passes = _count_passes(monkeypatch)
    env = gym.make_vec(env_id, num_envs=2, seconds=0.1)  # (an episode of five actions: a reset every five)
    env.reset(seed=0)
    ended = 0
    for _ in range(20):
        _, _, terminated, truncated, _ = env.step(np.zeros(env.action_space.shape, dtype=np.float32))
        ended += int(np.sum(terminated | truncated))
    env.close()
    assert ended >= 6 and passes == []
