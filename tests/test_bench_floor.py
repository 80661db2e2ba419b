"""The floor benchmark (``internutopia.bench.floor``): its minimal steps really step the world and
return the robot's state (as arrays, and as a dict per slot), the steps are timed against the
limit in the order that their work says (nothing returned beats fresh arrays, which beat our whole
step at one slot), and ours' physics call is timed inside ours' steps."""

from __future__ import annotations

import numpy as np

from internutopia.bench.cases import get_case
from internutopia.bench.floor import PHYSICS_IN_OURS, STEPS, _measure, _steps, format_row
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
        steps = _steps(env, batched, case.dict_actions(2))
        obs, reward, terminated, truncated = steps['floor']()
        assert np.allclose(runner.world.time, time_before)  # (the floor calls the packs, not the world)
        position, orientation = group.poses(group.slots)
        assert np.array_equal(obs['jetbot']['position'], position)
        assert np.array_equal(obs['jetbot']['orientation'], orientation)
        assert 0.0 < np.linalg.norm(position - start, axis=1).min() < 0.05  # one physics step of driving
        assert obs['jetbot']['joint_positions'].shape == (2, len(group.joint_names))
        assert obs['jetbot']['position'].base is None or not np.shares_memory(obs['jetbot']['position'], position)
        assert reward.shape == terminated.shape == truncated.shape == (2,)

        # The dict API's floor: the same step, its observation a dict per slot (views of the rows).
        per_slot, reward_list, terminated_list, _ = steps['floor-dict']()
        position, _ = group.poses(group.slots)
        assert len(per_slot) == 2 and reward_list == [0.0, 0.0] and terminated_list == [False, False]
        for slot in range(2):
            assert np.array_equal(per_slot[slot]['jetbot']['position'], position[slot])
            assert per_slot[slot]['jetbot']['joint_velocities'].shape == (len(group.joint_names),)
    finally:
        env.close()


def test_the_steps_are_timed_against_the_limit_and_ordered_by_their_work():
    rows = _measure('jetbot', 1, 12, 3)['rows']
    assert [row['step'] for row in rows] == [*STEPS, PHYSICS_IN_OURS]
    ratio = {row['step']: row['ratio'] for row in rows}
    seconds = {row['step']: row['ours_step_s'] for row in rows}
    for row in rows:
        assert row['ours_step_s'] > 0.0 and row['limit_step_s'] > 0.0 and row['pairs'] == 12
        assert f"limit/step {row['ratio']:.2f}" in format_row(row)
    # One jetbot: the limit's step is about 10 us, ours adds about 25, fresh arrays about 5, a
    # dict per slot about 8 more.
    assert ratio['bare'] > ratio['floor'] > ratio['ours'] and ratio['floor'] > ratio['floor-dict']
    assert ratio['floor-dict'] > ratio['ours-dict']
    # Ours' physics call is a part of ours' step, and near the limit's own call.
    assert seconds[PHYSICS_IN_OURS] < seconds['ours'] and ratio[PHYSICS_IN_OURS] > 0.5


def test_the_parts_of_ours_step_add_up_to_the_step():
    from internutopia.bench.floor import _parts

    out = _parts('jetbot', 2, 200)
    parts = out['parts_us']
    assert parts['physics (the batch call)'] > 0.0 and parts['observation tree'] > 0.0
    assert "controller 'move_along_path' apply" in parts and parts['action parse and check'] > 0.0
    # (by construction the parts, the rest and the entry cover the whole step)
    assert abs(sum(parts.values()) - out['step_us']) < 1e-6 * out['step_us'] + 1e-9
