"""The locomotion task's control tick in one compiled pass (``LocomotionTask.one_pass``,
:func:`~internutopia_extension.tasks.locomotion_kernels.tick_rows`): the walker's state, the
payment, the falls, the goal steering and what is due, with every result bit for bit that of the
step taken piece by piece (falls, time limits, goal steering, pushes and commands due included)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from test_fused_steps import _same

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia_extension.robots.h1_locomotion import episodes
from internutopia_extension.tasks import locomotion_kernels
from internutopia_extension.tasks.locomotion import LocomotionTask
from internutopia_extension.tasks.locomotion_kernels import COMMAND_DUE, PUSH_DUE, STEERING, CompiledTick

_TICK = CompiledTick.__call__  # (the pass itself: each run below counts its calls)

pytestmark = pytest.mark.skipif(not locomotion_kernels.tick_available(), reason='the one pass needs numba')


def _run(env_id: str, one_pass: bool, vector_steps: int, monkeypatch, **kwargs) -> tuple[list, list[int]]:
    """Every result of ``vector_steps`` random vector steps (a push made due inside an action in
    slot 2 at step 5) and the task's tables at the end; the flags of each tick run in one pass."""
    ticks: list[int] = []

    def counted(self, *args):
        done = _TICK(self, *args)
        ticks.append(done[3])
        return done

    monkeypatch.setattr(CompiledTick, '__call__', counted)
    monkeypatch.setattr(LocomotionTask, 'one_pass', one_pass)
    env = gym.make_vec(env_id, num_envs=4, **kwargs)
    runner = env.unwrapped.vec_env.runner
    results = [env.reset(seed=1)]
    rng = np.random.default_rng(1)
    for k in range(vector_steps):
        if k == 5:
            task = runner.terms.tasks['LocomotionTask']
            task.next_push[2] = runner.table.steps[2] + 2
            task._quiet_slots = None
        results.append(env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)))
    task = runner.terms.tasks['LocomotionTask']
    assert task.has_goals.any()  # (some episodes steer through goal points)
    walker = task.robot.only_group().walker
    results.append([task.terms_table, task.tracking_error, task.yaw_rate_error, task.fell, task.goal_index, task.next_push,
                    task.next_command, walker.command, walker.held_command])  # (the ended episodes' records: in the infos)
    env.close()
    return results, ticks


@pytest.mark.parametrize(('env_id', 'steps', 'kwargs', 'busy'), [
    ('internutopia/H1Walk-v0', 120, {}, False),
    # (time limits: every episode ends on its last step; SAME_STEP: each vector step ticks, where
    # NEXT_STEP's step after every env ended only starts their next episodes)
    ('internutopia/H1Walk-v0', 120, {'seconds': 0.2, 'autoreset_mode': 'SameStep'}, False),
    ('internutopia/H1Walk-v0', 90, {'seconds': 0.7}, True),  # (commands and pushes due between payments)
    ('internutopia/AliengoWalk-v0', 80, {}, False),
    ('internutopia/GR1Walk-v0', 40, {}, False),
])
def test_a_walking_tick_in_one_pass_gives_every_result_of_the_step_piece_by_piece(env_id, steps, kwargs, busy, monkeypatch):
    if busy:  # pushes every 0.05-0.15 s, commands every 0.05-0.2 s: due on many ticks, steering or not
        monkeypatch.setattr(episodes, 'PUSH_INTERVAL', (0.05, 0.15))
        monkeypatch.setattr(episodes, 'COMMAND_HOLD', (0.05, 0.2))
    piece_by_piece, none = _run(env_id, False, steps, monkeypatch, **kwargs)
    one_pass, ticks = _run(env_id, True, steps, monkeypatch, **kwargs)
    assert not none and len(ticks) >= steps  # (every vector step's tick went through it)
    assert any(flags & PUSH_DUE for flags in ticks)  # (slot 2's push at least)
    if busy:  # commands due, and steering left to the task after them
        assert any(flags & COMMAND_DUE and flags & STEERING for flags in ticks)
    assert _same(piece_by_piece, one_pass)  # observations, rewards, flags, infos, records, the task's tables
    ended = sum(int(np.count_nonzero(step[2] | step[3])) for step in one_pass[1:-1])
    assert ended > 0  # (falls or time limits: the pass's terminations and truncations were compared)


def test_the_task_forgets_groups_past_its_bound_and_finds_its_own_again(monkeypatch):
    """The task keeps its robot groups' start facts and one-pass decisions for a few groups only
    (a run whose structures keep changing would keep every old group alive): past the bound it
    forgets them all, and the group in use finds its own again on its next start, the pass with them."""
    from internutopia_extension.tasks import locomotion

    env = gym.make_vec('internutopia/H1Walk-v0', num_envs=2)
    env.reset(seed=0)
    task = env.unwrapped.vec_env.runner.terms.tasks['LocomotionTask']
    group = task.robot.only_group()
    gone = [object() for _ in range(locomotion._GROUPS_KEPT)]  # (groups of structures no slot holds)
    task._group_starts = {id(old): (old, locomotion._GroupStart(np.zeros(len(locomotion._TERM_NAMES)), 0.005, 4, None))
                          for old in gone}
    env.reset(seed=1)  # (the group in use starts its episodes again)
    assert list(task._group_starts) == [id(group)] and task._group_starts[id(group)][1].spec is not None
    ticks = []

    def counted(self, *args):
        ticks.append(1)
        return _TICK(self, *args)

    monkeypatch.setattr(CompiledTick, '__call__', counted)
    env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    assert ticks  # (its tick ran in one pass again)
    env.close()
