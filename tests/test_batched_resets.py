"""Resets of many slots at once (issue 49): sampled episodes built from validated templates and
taken uncopied, each entity group and batched task started once for all the slots of a reset.

What a user sees must not change: the same episodes for the same seed, the same states as resets
one slot at a time, a user's own ``TaskCfg`` still copied, and one slot's failure (or a Ctrl-C)
in a batched start costing that slot alone and losing no episode.
"""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.core.config.fresh_episodes import FreshEpisodes
from internutopia.core.episode_queue import EpisodeQueue, Fresh
from internutopia.core.episodes import generate_point_nav_episodes
from internutopia.core.gym_vector.episodes import EpisodeSource
from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.robots.aliengo_locomotion.episodes import aliengo_walk_sampler
from internutopia_extension.robots.gr1_locomotion.episodes import gr1_walk_sampler
from internutopia_extension.robots.h1_locomotion.episodes import walk_sampler
from internutopia_extension.tasks.finite_step import FiniteStepTask


def _validated(config):
    """``config`` as validating the fields it was given builds it."""
    dumped = config.model_dump()
    return type(config).model_validate({name: dumped[name] for name in config.model_fields_set})


def _assert_as_validated(episodes) -> None:
    for episode in episodes:
        again, robot = _validated(episode), episode.robots[0]
        assert again == episode and again.model_fields_set == episode.model_fields_set
        assert _validated(robot) == robot and _validated(robot).model_fields_set == robot.model_fields_set
    robots = [id(e.robots[0]) for e in episodes]
    assert len(set(robots)) == len(robots)  # each its own robot (its start pose)
    # and its own controllers where it was given them (else the class's, from a private template)
    controllers = [id(c) for e in episodes if 'controllers' in e.robots[0].model_fields_set for c in e.robots[0].controllers]
    assert len(set(controllers)) == len(controllers)


@pytest.mark.parametrize('make', [walk_sampler, aliengo_walk_sampler, gr1_walk_sampler])
def test_walking_samplers_build_what_validating_each_episode_builds(make):
    sampler = make(batch=8, reward_scales={'termination': -3})
    first = sampler(np.random.default_rng(5))
    episodes = first + sampler(np.random.default_rng(6))
    assert isinstance(first, FreshEpisodes) and len(set(first.families)) == 1
    _assert_as_validated(episodes)
    assert {e.reward_scales['termination'] for e in episodes} == {-3.0}
    assert len({id(e.reward_scales) for e in episodes}) == len(episodes)
    assert sum(e.goals is not None for e in episodes) not in (0, len(episodes))  # both kinds drawn
    # the same seed, the same episodes
    assert make(batch=8, reward_scales={'termination': -3})(np.random.default_rng(5)) == first


@pytest.mark.parametrize('goal', ['reach', 'pick', 'place'])
def test_manipulation_samplers_build_what_validating_each_episode_builds(goal):
    from internutopia.envs.manipulation import manipulation_sampler

    sampler = manipulation_sampler(goal, batch=6)
    first = sampler(np.random.default_rng(5))
    episodes = first + sampler(np.random.default_rng(6))
    assert isinstance(first, FreshEpisodes) and len(set(first.families)) == 1
    _assert_as_validated(episodes)
    for episode in episodes:  # its object too, and the task fields of its draws
        assert _validated(episode.objects[0]) == episode.objects[0]
        assert tuple(episode.goal_position) == tuple(episode.objects[0].position) or goal == 'place'
    assert len({id(e.objects[0]) for e in episodes}) == len({id(e.reward_scales) for e in episodes}) == len(episodes)
    assert len({tuple(e.objects[0].position) for e in episodes}) == len(episodes)  # drawn, not the template's
    assert [e.episode_idx for e in first] == list(range(6))
    if goal == 'place':  # the goal at least 15 cm from the cube
        assert min(np.hypot(*np.subtract(e.goal_position, e.objects[0].position)[:2]) for e in episodes) >= 0.15
    assert manipulation_sampler(goal, batch=6)(np.random.default_rng(5)) == first  # the same seed, the same episodes


def test_the_walking_samplers_draws_are_the_generators_own_numbers():
    # The samplers draw with Generator.uniform's arithmetic and choice's index draw, not the calls
    # themselves (a fraction of their cost): the same numbers from the same stream, bit for bit,
    # so a seed gives the episodes earlier runs trained on.
    from internutopia_extension.robots.h1_locomotion.episodes import _pick, _uniform

    ours, numpy = np.random.default_rng(7), np.random.default_rng(7)
    for low, high in [(-np.pi, np.pi), (-0.3, 1.0), (4.0, 8.0), (0.2, 0.5), (1.0, 4.0)] * 2000:
        assert _uniform(ours, low, high) == float(numpy.uniform(low, high))
        assert _pick(ours, (0.05, 0.1)) == float(numpy.choice((0.05, 0.1)))
        assert _pick(ours, (-1.0, 1.0, 2.0)) == float(numpy.choice((-1.0, 1.0, 2.0)))
    assert ours.random() == numpy.random()


def test_point_nav_episodes_build_what_validating_each_builds_one_family_per_scene():
    from internutopia.core.episodes import DEFAULT_SCENES

    robot = JetbotRobotCfg()
    episodes = generate_point_nav_episodes(6, 4, scenes=DEFAULT_SCENES, robot_cfg=robot)
    _assert_as_validated(episodes)
    assert not {id(c) for c in robot.controllers} & {id(c) for e in episodes for c in e.robots[0].controllers}
    assert isinstance(episodes, FreshEpisodes)
    assert episodes.families[:3] == episodes.families[3:] and len(set(map(id, episodes.families))) == 3
    assert len({id(e.objects[0]) for e in episodes}) == 6
    assert generate_point_nav_episodes(6, 4, scenes=DEFAULT_SCENES) == episodes


def test_a_point_nav_sampler_validates_each_scenes_template_once_and_keeps_its_family(monkeypatch):
    """An endless point-nav sampler validates a scene's episode template on its first batch only:
    later batches are copies of it (as validating gives them), of the same family (so the runner
    finds their structure once), and the same seed still gives the same episodes."""

    from internutopia.envs.point_nav import point_nav_sampler
    from internutopia_extension.configs.tasks import PointNavTaskCfg

    sampler = point_nav_sampler('jetbot', batch=4)
    validated = []
    original = PointNavTaskCfg.__init__

    def counting(self, **fields):
        validated.append(fields['scene_asset_path'])
        original(self, **fields)

    monkeypatch.setattr(PointNavTaskCfg, '__init__', counting)
    batches = [sampler(np.random.default_rng(seed)) for seed in (1, 2, 1)]
    assert validated == []  # (the flat ground's template was made when the sampler was)
    for batch in batches:
        _assert_as_validated(batch)
    assert len({id(family) for batch in batches for family in batch.families}) == 1
    assert batches[0] == batches[2] and batches[0] != batches[1]


def test_fresh_episodes_are_taken_uncopied_a_users_task_configs_are_copied():
    users = FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()])
    fresh = FreshEpisodes([FiniteStepTaskCfg(max_steps=4, robots=[JetbotRobotCfg()])], family='mine')
    source = EpisodeSource(lambda rng: fresh)
    queue = EpisodeQueue(source.stream(np.random.default_rng(0)))
    taken = queue.next()
    assert taken.config is fresh[0] and taken.family == 'mine'
    queue = EpisodeQueue([users, Fresh(fresh[0], 'mine')])
    copied, uncopied = queue.next(), queue.next()
    assert copied.config == users and copied.config is not users and copied.family is None
    assert uncopied.config is fresh[0]
    with pytest.raises(ValueError, match='not both'):
        FreshEpisodes([users], family='a', families=['b'])
    # (handed out marked refused: the reset that draws it records it as failed)
    refused = EpisodeQueue([Fresh('not a config', 'x')]).next()  # type: ignore[arg-type]
    assert refused.refused == 'task_configs[0] is a str, expected a TaskCfg' and refused.config.type == 'str'


def _locomotion_state(env) -> dict:
    runner = env.unwrapped.vec_env.runner
    task = runner.terms.tasks['LocomotionTask']
    pack = next(iter(runner.world.packs.values()))
    fields = ('max_steps', 'scales', 'next_command', 'next_change', 'period', 'next_push', 'has_goals',
              'goal_count', 'goal_speed', 'goal_tolerance', 'push_interval', 'push_key', 'pushes_done')
    # (the goal table's columns beyond a slot's goal count are never read)
    goals = [task.goal_points[slot, :count].tolist() for slot, count in enumerate(task.goal_count)]
    return {'state': pack.batch.state.copy(), 'schedules': [list(s) for s in task.schedules] + goals,
            **{name: getattr(task, name).copy() for name in fields},
            'command': task.robot.group_list[0].walker.held_command.copy()}


def test_a_reset_of_many_slots_leaves_them_as_resets_one_by_one():
    envs = [gym.make_vec('internutopia/H1Walk-v0', num_envs=4), gym.make_vec('internutopia/H1Walk-v0', num_envs=4)]
    try:
        for env in envs:
            env.reset(seed=11)
        together, one_by_one = envs
        together.reset(options={'reset_mask': np.array([True, True, False, True])})
        for slot in (0, 1, 3):
            mask = np.zeros(4, dtype=bool)
            mask[slot] = True
            one_by_one.reset(options={'reset_mask': mask})
        a, b = _locomotion_state(together), _locomotion_state(one_by_one)
        assert a.keys() == b.keys()
        for key in a:
            if key == 'schedules':
                assert a[key] == b[key]
            else:
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        actions = np.random.default_rng(0).uniform(-1, 1, (30, 4, together.single_action_space.shape[0]))
        for action in actions:  # and they go on the same (pushes drawn from each episode's own key)
            for x, y in zip(together.step(action)[:4], one_by_one.step(action)[:4], strict=True):
                np.testing.assert_array_equal(x, y)
    finally:
        for env in envs:
            env.close()


# ------------------------------------------------------------------------------------------------
# one slot's failure inside a batched start
#: Per episode tag, how many times its start was tried.
TRIES: dict[int, int] = {}


class BatchedFaultTaskCfg(FiniteStepTaskCfg):
    """A finite-step task started in batches; it fails ``fail`` times, or is interrupted (Ctrl-C) ``interrupt`` times."""

    type: str = 'BatchedResetFaultTask'
    tag: int = 0
    fail: int = 0
    interrupt: int = 0


def _try_start(config) -> None:
    TRIES[config.tag] = TRIES.get(config.tag, 0) + 1
    if TRIES[config.tag] <= config.interrupt:
        raise KeyboardInterrupt
    if TRIES[config.tag] <= config.interrupt + config.fail:
        raise RuntimeError(f'episode {config.tag} failed to start')


@BaseTask.register('BatchedResetFaultTask')
class BatchedFaultTask(FiniteStepTask):
    batched_calls: list[list[int]] = []

    def reset_slot(self, slot: int, config) -> None:
        _try_start(config)
        super().reset_slot(slot, config)

    def reset_slots(self, slots, configs) -> None:
        type(self).batched_calls.append(slots.tolist())
        for config in configs:
            _try_start(config)
        for slot, config in zip(slots.tolist(), configs, strict=True):
            super().reset_slot(slot, config)


def _fault_task(tag: int, **kw) -> BatchedFaultTaskCfg:
    return BatchedFaultTaskCfg(tag=tag, max_steps=2, robots=[JetbotRobotCfg()], **kw)


@pytest.fixture
def fresh_tries():
    TRIES.clear()
    BatchedFaultTask.batched_calls = []
    yield
    TRIES.clear()


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_failing_start_in_a_batched_reset_fails_its_slot_alone(make_config, tmp_path, fresh_tries):
    path = tmp_path / 'results.jsonl'
    tasks = [_fault_task(0), _fault_task(1), _fault_task(2), _fault_task(3, fail=99), _fault_task(4), _fault_task(5),
             _fault_task(6)]
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path), episode_attempts=1)) as env:
        env.reset()  # (the first start of a task type makes its object, slot by slot)
        obs, info = env.reset()
        assert [task.tag for task in info] == [6, 4, 5]  # episode 3 fails: its slot takes episode 6
        assert all(o is not None for o in obs) and env.active_slots == [0, 1, 2]
        assert [c.tag for c in env.runner.terms.tasks['BatchedResetFaultTask'].configs] == [6, 4, 5]
    assert BatchedFaultTask.batched_calls == [[0, 1, 2]]  # one call for the three slots
    assert [(r['episode_index'], r.get('outcome')) for r in _records(path)][3] == (3, 'failed')


def test_ctrl_c_inside_a_batched_start_loses_no_episode(make_config, tmp_path, fresh_tries):
    path = tmp_path / 'results.jsonl'
    tasks = [_fault_task(tag, interrupt=int(tag == 4)) for tag in range(7)]
    with Env(make_config(tasks, env_num=3, metrics_save_path=str(path))) as env:
        env.reset()
        with pytest.raises(KeyboardInterrupt):
            env.reset()  # episodes 3, 4, 5 in one call: 4 is interrupted
        assert BatchedFaultTask.batched_calls == [[0, 1, 2]] and env.active_slots == []
        env.reset()
        for _ in range(50):
            if env.finished:
                break
            _, _, terminated, _, _ = env.step([None] * 3)
            ended = [i for i, t in enumerate(terminated) if t]
            if ended:
                env.reset(ended)
        assert env.finished
    got = {r['episode_index']: r.get('outcome') for r in _records(path)}
    assert got == {0: 'abandoned', 1: 'abandoned', 2: 'abandoned', 3: None, 4: None, 5: None, 6: None}
