"""The floor benchmark (``internutopia.bench.floor``): its minimal step really steps the world and
returns the robot's state, and the three steps are timed against the limit in the order that
their work says (nothing returned beats fresh arrays, which beat our whole step at one slot)."""

from __future__ import annotations

import numpy as np

from internutopia.bench.cases import get_case
from internutopia.bench.floor import STEPS, _measure, _steps, format_row
from internutopia.core.vec_env import Env


def test_the_floor_step_advances_the_physics_and_returns_the_robots_state():
    case = get_case('jetbot')
    env = Env(case.config(2, 'off'))
    try:
        env.reset()
        batched = case.array_action(2)
        for _ in range(20):
            env.step_arrays(batched)  # the jetbots drive off: their wheels' controls are set
        runner = env.runner
        group = next(g for g in runner.groups.robots.values() if g.name == 'jetbot')
        start, _ = group.poses(group.slots)
        time_before = runner.world.time
        obs, reward, terminated, truncated = _steps(env, batched)['floor']()
        assert np.allclose(runner.world.time, time_before)  # (the floor calls the packs, not the world)
        position, orientation = group.poses(group.slots)
        assert np.array_equal(obs['jetbot']['position'], position)
        assert np.array_equal(obs['jetbot']['orientation'], orientation)
        assert 0.0 < np.linalg.norm(position - start, axis=1).min() < 0.05  # one physics step of driving
        assert obs['jetbot']['joint_positions'].shape == (2, len(group.joint_names))
        assert obs['jetbot']['position'].base is None or not np.shares_memory(obs['jetbot']['position'], position)
        assert reward.shape == terminated.shape == truncated.shape == (2,)
    finally:
        env.close()


def test_three_steps_are_timed_against_the_limit_and_ordered_by_their_work():
    rows = _measure('jetbot', 1, 12, 3)['rows']
    assert [row['step'] for row in rows] == list(STEPS)
    ratio = {row['step']: row['ratio'] for row in rows}
    for row in rows:
        assert row['ours_step_s'] > 0.0 and row['limit_step_s'] > 0.0 and row['pairs'] == 12
        assert f"step/limit {row['ratio']:.2f}" in format_row(row)
    # One jetbot: the limit's step is about 10 us, ours adds about 25, fresh arrays about 5.
    assert ratio['bare'] > ratio['ours'] and ratio['floor'] > ratio['ours']


def test_the_parts_of_ours_step_add_up_to_the_step():
    from internutopia.bench.floor import _parts

    out = _parts('jetbot', 2, 200)
    parts = out['parts_us']
    assert parts['physics (the batch call)'] > 0.0 and parts['observation tree'] > 0.0
    assert "controller 'move_along_path' apply" in parts and parts['action parse and check'] > 0.0
    # (by construction the parts, the rest and the entry cover the whole step)
    assert abs(sum(parts.values()) - out['step_us']) < 1e-6 * out['step_us'] + 1e-9
