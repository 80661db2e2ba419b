"""Ctrl-C inside the Gymnasium adapters' calls: the loop that catches ``KeyboardInterrupt`` goes on.

A real ``SIGINT`` is sent to this process from inside a call (the runner's physics step or an
episode's start), as a terminal's Ctrl-C lands mid-call. The call is held until it is done, its
result is lost to the caller, and the adapter goes on from it as docs/gymnasium.md ("Ctrl-C")
says: the sub-envs whose episodes ended in it end and restart as usual, with their observations.
Before, those sub-envs froze for good (observation zeros, reward 0, never ending), a vector env
whose sub-envs had all ended raised ``ValueError`` on every later step, and the one-slot
``gym_env.Env`` raised ``TypeError`` on every later step.
"""

from __future__ import annotations

import signal

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.gym_vector import FlatEnv, VectorEnv
from internutopia.core.runner import runner as runner_module
from internutopia.core.task.base import BaseTask
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask

#: Hooks run at the next physics step of the runner and the next episode start, then forgotten.
IN_STEP: list = []
IN_START: list = []


@pytest.fixture(autouse=True)
def _hooks(monkeypatch):
    IN_STEP.clear()
    IN_START.clear()

    def advance(self, *args, _real=runner_module.Runner._advance, **kwargs):
        while IN_STEP:
            IN_STEP.pop()()
        return _real(self, *args, **kwargs)

    monkeypatch.setattr(runner_module.Runner, '_advance', advance)
    yield
    IN_STEP.clear()
    IN_START.clear()


class StartHookTaskCfg(FiniteStepTaskCfg):
    """A finite-step task whose episode start runs the hooks of ``IN_START``."""

    type: str = 'GymInterruptStartHookTask'


@BaseTask.register('GymInterruptStartHookTask')
class StartHookTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        super().reset_slot(slot, config)
        while IN_START:
            IN_START.pop()()


def _ctrl_c() -> None:
    signal.raise_signal(signal.SIGINT)


def _config(tasks: list, env_num: int, **kw) -> Config:
    return Config(simulator=SimConfig(physics_dt=1 / 60), env_num=env_num, env_offset_size=5.0,
                  metrics_save_path='none', task_configs=tasks, **kw)


def _task(steps: int) -> StartHookTaskCfg:
    return StartHookTaskCfg(max_steps=steps, robots=[JetbotRobotCfg()])


def _interrupted(call, *args):
    """Run ``call(*args)`` with a Ctrl-C landing in its physics step; it must raise ``KeyboardInterrupt``."""
    IN_STEP.append(_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        call(*args)
    assert not IN_STEP  # (it landed inside)


# ------------------------------------------------------------------------------------------------
# VectorEnv (gymnasium.make_vec('internutopia/...'))
@pytest.mark.parametrize('array_path', [True, False], ids=['arrays', 'dicts'])
@pytest.mark.parametrize('repeat', [1, 2])
def test_next_step_a_ctrl_c_in_the_step_an_env_ends_restarts_it_on_the_next_step(array_path, repeat):
    # env 0 runs 3-step episodes (6-step ones with repeat=2: three policy steps), env 1 a long one.
    tasks = [_task(3 * repeat), _task(100 * repeat), *[_task(3 * repeat)] * 4]
    envs = VectorEnv(_config(tasks, 2), episodes=tasks, action_repeat=repeat)
    envs.array_path = envs.array_path and array_path
    first, _ = envs.reset()
    zero = np.zeros((2, 2), dtype=np.float32)
    for _ in range(2):
        _, _, terminated, truncated, _ = envs.step(zero)
        assert not (terminated | truncated).any()
    _interrupted(envs.step, zero)  # (env 0's episode ends in it: its result is lost)
    # The next step starts env 0's next episode (NEXT_STEP's reset step): reset observation,
    # reward 0, flags down, its reset info; env 1 steps on.
    obs, reward, terminated, truncated, info = envs.step(zero)
    assert not (terminated | truncated).any() and reward[0] == 0.0
    np.testing.assert_array_equal(obs[0], first[0])  # (the same task from the same start)
    assert info['_task_config'].tolist() == [True, False] and info['episode_index'][0] == 2
    assert info['steps'][1] == 4 * repeat
    # It runs its episode and ends it, and the next one after it, as any env does.
    ends = []
    for t in range(8):
        obs, reward, terminated, truncated, info = envs.step(zero)
        assert np.abs(obs[0]).sum() > 0 and np.abs(obs[1]).sum() > 0
        if terminated[0] or truncated[0]:
            ends.append(t)
    assert ends == [2, 6] and envs.vec_env.active_slots == [0, 1]


@pytest.mark.parametrize('array_path', [True, False], ids=['arrays', 'dicts'])
def test_next_step_a_ctrl_c_in_the_step_every_env_ends_restarts_them_all(array_path):
    tasks = [_task(3)]
    envs = VectorEnv(_config(tasks, 2), episodes=tasks)
    envs.array_path = envs.array_path and array_path
    first, _ = envs.reset()
    zero = np.zeros((2, 2), dtype=np.float32)
    envs.step(zero)
    envs.step(zero)
    _interrupted(envs.step, zero)  # (both episodes end in it)
    obs, reward, terminated, truncated, info = envs.step(zero)  # (used to raise ValueError, for good)
    assert not (terminated | truncated).any() and reward.tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(obs, first)
    assert info['episode_index'].tolist() == [2, 3]
    for t in range(3):
        _, _, terminated, truncated, info = envs.step(zero)
        assert (terminated | truncated).tolist() == [t == 2] * 2
    assert 'metrics' in info


def test_same_step_a_ctrl_c_in_the_step_an_env_ends_keeps_its_next_episode_running():
    tasks = [_task(3), _task(100)]
    envs = VectorEnv(_config(tasks, 2), episodes=tasks, autoreset_mode='SameStep')
    envs.reset()
    zero = np.zeros((2, 2), dtype=np.float32)
    envs.step(zero)
    envs.step(zero)
    _interrupted(envs.step, zero)  # (env 0 ends and starts its next episode in it)
    # SAME_STEP already started env 0's next episode in the interrupted step: it steps on in it.
    obs, _, terminated, truncated, info = envs.step(zero)
    assert not (terminated | truncated).any() and 'final_obs' not in info
    assert info['episode_index'].tolist() == [2, 1] and info['steps'].tolist() == [1, 4]
    _, _, _, _, info = envs.step(zero)
    _, _, terminated, truncated, info = envs.step(zero)
    assert (terminated | truncated).tolist() == [True, False] and info['_final_obs'].tolist() == [True, False]


def test_disabled_a_ctrl_c_in_the_step_an_env_ends_leaves_it_to_reset():
    tasks = [_task(3), _task(100)]
    envs = VectorEnv(_config(tasks, 2), episodes=tasks, autoreset_mode='Disabled')
    first, _ = envs.reset()
    zero = np.zeros((2, 2), dtype=np.float32)
    envs.step(zero)
    envs.step(zero)
    _interrupted(envs.step, zero)
    with pytest.raises(RuntimeError, match=r'env\(s\) \[0\] ended their episodes'):
        envs.step(zero)
    obs, info = envs.reset(options={'reset_mask': np.array([True, False])})
    np.testing.assert_array_equal(obs[0], first[0])
    for t in range(3):
        _, _, terminated, truncated, _ = envs.step(zero)
        assert (terminated | truncated).tolist() == [t == 2, False]


def test_a_ctrl_c_in_a_reset_leaves_the_started_episodes_running():
    tasks = [_task(3)]
    envs = VectorEnv(_config(tasks, 2), episodes=tasks)
    envs.reset()
    zero = np.zeros((2, 2), dtype=np.float32)
    envs.step(zero)
    IN_START.append(_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        envs.reset(options={'reset_mask': np.array([True, True])})
    assert not IN_START
    # Both started their episodes (2 and 3): the next steps step them, and they end after 3.
    for t in range(3):
        _, _, terminated, truncated, info = envs.step(zero)
        assert info['episode_index'].tolist() == [2, 3] and info['steps'].tolist() == [t + 1] * 2
        assert (terminated | truncated).tolist() == [t == 2] * 2


def test_a_ctrl_c_where_a_next_step_starts_envs_books_them_started():
    tasks = [_task(3)]
    envs = VectorEnv(_config(tasks, 2), episodes=tasks)
    envs.reset()
    zero = np.zeros((2, 2), dtype=np.float32)
    for _ in range(3):
        envs.step(zero)  # (both end on the third)
    IN_START.append(_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        envs.step(zero)  # (NEXT_STEP's reset step: Ctrl-C while env 0's next episode starts)
    for t in range(3):
        _, _, terminated, truncated, info = envs.step(zero)
        assert info['episode_index'].tolist() == [2, 3] and info['steps'].tolist() == [t + 1] * 2
        assert (terminated | truncated).tolist() == [t == 2] * 2


class BreakingTaskCfg(FiniteStepTaskCfg):
    """A finite-step task whose step ``break_at`` raises."""

    type: str = 'GymInterruptBreakingTask'
    break_at: int = 0


@BaseTask.register('GymInterruptBreakingTask')
class BreakingTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        super().reset_slot(slot, config)
        self.break_at = getattr(self, 'break_at', {})
        self.break_at[slot] = config.break_at

    def step(self, slots: np.ndarray):
        for slot in slots.tolist():
            if self.view.steps[slot] == self.break_at.get(slot):
                raise ValueError(f'task broke in slot {slot}')
        return super().step(slots)


def test_an_episode_error_raised_out_of_a_step_does_not_freeze_its_env():
    # Config(episode_errors='raise'): the step that fails env 0's episode raises after it is complete;
    # the loop catches it and goes on, and env 0 starts its next episode (it used to freeze).
    tasks = [BreakingTaskCfg(max_steps=9, break_at=2, robots=[JetbotRobotCfg()]), _task(100), _task(3)]
    envs = VectorEnv(_config(tasks, 2, episode_errors='raise'), episodes=tasks)
    envs.reset()
    zero = np.zeros((2, 2), dtype=np.float32)
    envs.step(zero)
    with pytest.raises(ValueError, match='task broke in slot 0'):
        envs.step(zero)
    _, reward, terminated, truncated, info = envs.step(zero)  # (env 0's next episode starts)
    assert info['_task_config'].tolist() == [True, False] and info['episode_index'][0] == 2
    for t in range(3):
        _, _, terminated, truncated, _ = envs.step(zero)
        assert (terminated | truncated).tolist() == [t == 2, False]


# ------------------------------------------------------------------------------------------------
# The one-slot envs
def test_dict_env_a_ctrl_c_in_the_step_the_episode_ends_reports_the_end_on_the_next_step():
    env = Env(_config([_task(3)], 1), endless=True)
    env.reset()
    env.step(None)
    env.step(None)
    _interrupted(env.step, None)  # (the episode ends in it)
    final = env.get_observations()
    obs, reward, terminated, truncated, info = env.step(None)  # (used to raise TypeError, for good)
    assert (reward, terminated, truncated, info) == (0.0, True, True, {})
    assert obs is final and sorted(obs) == sorted(env.observation_space.spaces)
    first, reset_info = env.reset()
    assert reset_info['episode_index'] == 1
    for t in range(3):
        obs, _, terminated, _, _ = env.step(None)
        assert terminated == (t == 2) and obs in env.observation_space


def test_dict_env_a_ctrl_c_in_a_reset_leaves_its_episode_running():
    env = Env(_config([_task(3)], 1), endless=True)
    env.reset()
    for _ in range(3):
        env.step(None)
    IN_START.append(_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        env.reset()
    assert not IN_START
    for t in range(3):
        _, _, terminated, _, _ = env.step(None)
        assert terminated == (t == 2)
    assert env.vec_env.runner.episodes[0].index == 1


def test_flat_env_a_ctrl_c_in_the_step_the_episode_ends_reports_the_end_on_the_next_step():
    env = FlatEnv(_config([_task(3)], 1))
    first, _ = env.reset()
    zero = np.zeros(2, dtype=np.float32)
    env.step(zero)
    env.step(zero)
    _interrupted(env.step, zero)
    obs, reward, terminated, truncated, info = env.step(zero)  # (the end the Ctrl-C kept from the caller)
    assert (reward, terminated, truncated, info) == (0.0, False, True, {}) and obs.shape == first.shape
    with pytest.raises(RuntimeError, match='call reset'):  # (reported once; then as any ended episode)
        env.step(zero)
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs, first)
    for t in range(3):
        _, _, terminated, truncated, _ = env.step(zero)
        assert (terminated or truncated) == (t == 2)


def test_one_slot_envs_an_episode_error_raised_out_of_a_step_ends_the_episode():
    # Config(episode_errors='raise'): the loop catches the error; the episode it failed is over.
    tasks = [BreakingTaskCfg(max_steps=9, break_at=2, robots=[JetbotRobotCfg()]), _task(3)]
    env = Env(_config(tasks, 1, episode_errors='raise'), endless=True)
    env.reset()
    env.step(None)
    with pytest.raises(ValueError, match='task broke in slot 0'):
        env.step(None)
    obs, reward, terminated, _, _ = env.step(None)  # (used to step a slot without an episode: TypeError)
    assert terminated and reward == 0.0 and obs in env.observation_space
    assert env.reset()[1]['episode_index'] == 1
    assert [env.step(None)[2] for _ in range(3)] == [False, False, True]
    flat = FlatEnv(_config(tasks, 1, episode_errors='raise'))
    zero = np.zeros(2, dtype=np.float32)
    flat.reset()
    flat.step(zero)
    with pytest.raises(ValueError, match='task broke in slot 0'):
        flat.step(zero)
    with pytest.raises(RuntimeError, match='call reset'):  # (not a VectorEnv error about reset_mask)
        flat.step(zero)
    flat.reset()
    assert [flat.step(zero)[3] for _ in range(3)] == [False, False, True]
