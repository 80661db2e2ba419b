"""When the hooks of extensions written InternUtopia's way (one object per slot) run, and what they give.

Each test checks what a user of such a class sees: how often (and in which order) its hooks run,
what it reads, what is recorded, and the errors it gets:

- ``cleanup()`` of a task, its robots, their controllers and sensors runs once per episode, in
  InternUtopia's order (the task's, which calls its robots', which call their controllers' and
  sensors'), at the reset that ends the episode, whatever the slot runs next, and none at
  ``close()`` (InternUtopia's ``close`` cleans nothing up either);
- a controller's ``get_obs()`` runs once per step, whoever reads the observation;
- a task's observation, a sensor's reading and a controller's observation are read again after
  physics outside a step (a warm-up) or a state set by hand;
- a task's metrics (and its reward) exist in its ``__init__`` and ``post_reset``;
- a reward's ``calc()`` is not called on the step its task ends the episode;
- wrong return types fail the episode with an error naming the class, the method and the env.
"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.metric import MetricCfg
from internutopia.core.config.robot import ControllerCfg, RobotCfg
from internutopia.core.config.sensor import SensorCfg
from internutopia.core.config.task import TaskCfg
from internutopia.core.config.task.reward import RewardCfg
from internutopia.core.robot.controller import BaseController
from internutopia.core.robot.robot import BaseRobot
from internutopia.core.sensor.sensor import BaseSensor
from internutopia.core.task import BaseMetric, BaseTask
from internutopia.core.task.reward import BaseReward
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.robots.jetbot import JetbotRobot

WHEELS = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)
DRIVE = {'jetbot': {'move_by_speed': [0.3, 0.0]}}


def make_env(tasks: list, env_num: int = 1, **kwargs) -> Env:
    return Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, metrics_save_path='none',
                      task_configs=tasks, **kwargs))


# -- cleanup ----------------------------------------------------------------------------------------
LOG: list = []


class LcRobotCfg(RobotCfg):
    name: str = 'rover'
    type: str = 'LcRobot'
    prim_path: str = '/rover'


@BaseRobot.register('LcRobot')
class LcRobot(JetbotRobot):
    def __init__(self, config, scene):
        super().__init__(config, scene)
        self.episode = sum(1 for entry in LOG if entry[0] == 'robot.init')
        LOG.append(('robot.init', self.episode))

    def cleanup(self):
        LOG.append(('robot.cleanup', self.episode))
        super().cleanup()


class LcCtrlCfg(ControllerCfg):
    type: str = 'LcCtrl'


@BaseController.register('LcCtrl')
class LcCtrl(BaseController):
    def action_to_control(self, action):
        return None

    def cleanup(self):
        LOG.append(('ctrl.cleanup', getattr(self.robot, 'episode', self.robot._slot)))


class LcSensorCfg(SensorCfg):
    type: str = 'LcSensor'


@BaseSensor.register('LcSensor')
class LcSensor(BaseSensor):
    def get_data(self):
        return {}

    def cleanup(self):
        LOG.append(('sensor.cleanup', getattr(self._robot, 'episode', self._robot._slot)))


class LcTaskCfg(TaskCfg):
    type: str = 'LcTask'


class LcOtherTaskCfg(TaskCfg):
    type: str = 'LcOtherTask'


@BaseTask.register('LcTask')
class LcTask(BaseTask):
    def is_done(self):
        return self.steps >= 2

    def cleanup(self):
        LOG.append(('task.cleanup', type(self).__name__, self.robots['rover'].episode))
        super().cleanup()


@BaseTask.register('LcOtherTask')
class LcOtherTask(LcTask):
    pass


class LcMetricCfg(MetricCfg):
    type: str = 'LcMetric'
    name: str = 'count'


@BaseMetric.register('LcMetric')
class LcMetric(BaseMetric):
    def update(self, obs):
        pass

    def calc(self):
        return 1


def rover(**kwargs):
    return LcRobotCfg(controllers=[WHEELS, LcCtrlCfg(name='tick')], sensors=[LcSensorCfg(name='ping')], **kwargs)


def run_episodes(env: Env, episodes: int) -> None:
    env.reset()
    for episode in range(episodes):
        for _ in range(2):
            env.step([{'rover': {'move_by_speed': [0.3, 0.0]}}])
        LOG.append(f'reset after {episode}')
        env.reset([0])


def test_cleanup_runs_once_per_episode_in_upstream_order_at_the_reset_that_ends_it():
    LOG.clear()
    tasks = [LcTaskCfg(robots=[rover()]) for _ in range(3)]
    with make_env(tasks) as env:
        run_episodes(env, 3)
        assert env.finished
        LOG.append('close')
    assert LOG == [
        ('robot.init', 0), 'reset after 0',
        ('task.cleanup', 'LcTask', 0), ('robot.cleanup', 0), ('ctrl.cleanup', 0), ('sensor.cleanup', 0),
        ('robot.init', 1), 'reset after 1',
        ('task.cleanup', 'LcTask', 1), ('robot.cleanup', 1), ('ctrl.cleanup', 1), ('sensor.cleanup', 1),
        ('robot.init', 2), 'reset after 2',
        # the last episode: at the reset that empties its slot (InternUtopia's clear_single_task), not at close
        ('task.cleanup', 'LcTask', 2), ('robot.cleanup', 2), ('ctrl.cleanup', 2), ('sensor.cleanup', 2),
        'close',
    ]


def test_cleanup_under_a_built_in_task_runs_once_per_episode_too():
    LOG.clear()
    tasks = [FiniteStepTaskCfg(max_steps=2, robots=[rover()]) for _ in range(2)]
    with make_env(tasks) as env:
        run_episodes(env, 2)
    assert LOG == [
        ('robot.init', 0), 'reset after 0', ('robot.cleanup', 0), ('ctrl.cleanup', 0), ('sensor.cleanup', 0),
        ('robot.init', 1), 'reset after 1', ('robot.cleanup', 1), ('ctrl.cleanup', 1), ('sensor.cleanup', 1),
    ]


def test_a_task_cleanup_that_skips_super_leaves_its_robots_alone_as_upstream_does():
    LOG.clear()

    class QuietTaskCfg(TaskCfg):
        type: str = 'LcQuietTask'

    @BaseTask.register('LcQuietTask')
    class LcQuietTask(LcTask):
        def cleanup(self):
            LOG.append(('task.cleanup', 'quiet', self.robots['rover'].episode))

    with make_env([QuietTaskCfg(robots=[rover()])]) as env:
        run_episodes(env, 1)
    assert LOG == [('robot.init', 0), 'reset after 0', ('task.cleanup', 'quiet', 0)]


def test_each_cleanup_runs_at_the_reset_that_ends_its_episode_whatever_the_slot_runs_next():
    LOG.clear()
    tasks = [LcTaskCfg(robots=[rover()]), LcOtherTaskCfg(robots=[rover()], metrics=[LcMetricCfg()]),
             LcTaskCfg(robots=[rover()])]
    with make_env(tasks) as env:
        env.reset()
        for episode in range(3):
            for _ in range(2):
                env.step([{'rover': {'move_by_speed': [0.3, 0.0]}}])
            LOG.append(f'reset after {episode}')
            env.reset([0])
            terms = env.runner.terms
            # no per-slot object of an episode that is over is kept: only the next episode's
            holding = [type(owner.instances[0]).__name__ for owner in (*terms.tasks.values(), *terms.metrics.values())
                       if 0 in getattr(owner, 'instances', {})]
            assert holding == [['LcOtherTask', 'LcMetric'], ['LcTask'], []][episode]
    assert [entry for entry in LOG if entry[0] == 'task.cleanup'] == [
        ('task.cleanup', 'LcTask', 0), ('task.cleanup', 'LcOtherTask', 1), ('task.cleanup', 'LcTask', 2)]
    assert LOG.index(('task.cleanup', 'LcOtherTask', 1)) == LOG.index('reset after 1') + 1


def test_a_cleanup_that_raises_is_a_warning_and_the_next_episode_starts():
    class BoomTaskCfg(TaskCfg):
        type: str = 'LcBoomTask'

    @BaseTask.register('LcBoomTask')
    class LcBoomTask(LcTask):
        def cleanup(self):
            raise RuntimeError('cleanup boom')

    with make_env([BoomTaskCfg(robots=[rover()]), LcTaskCfg(robots=[rover()])]) as env:
        env.reset()
        for _ in range(2):
            env.step([{'rover': {'move_by_speed': [0.3, 0.0]}}])
        with pytest.warns(UserWarning, match=r'LcBoomTask\.cleanup\(\) in env 0 raised RuntimeError: cleanup boom'):
            obs, _ = env.reset([0])
        assert obs[0] is not None


def _kept_in_a_warning_registry(text: str) -> list[str]:
    """Modules whose ``__warningregistry__`` holds a warning of ``text``."""
    import sys

    # (a real module's registry only: some objects in sys.modules answer any attribute, e.g. a lazy namespace)
    registries = [(name, vars(module).get('__warningregistry__')) for name, module in list(sys.modules.items())
                  if hasattr(module, '__dict__')]
    return [name for name, registry in registries
            if isinstance(registry, dict) and any(isinstance(key, tuple) and text in str(key[0]) for key in registry)]


def test_cleanup_warnings_are_shown_every_time_at_the_callers_line_and_kept_nowhere():
    """A per-slot cleanup warning names its slot and error, so each text is new: entered in the
    warning registry of the module it pointed at (the runner's), they were kept for the process's
    life, one per failing episode."""
    from internutopia.per_slot.instances import warn_cleanup_error

    class CountingBoomTaskCfg(TaskCfg):
        type: str = 'LcCountingBoomTask'

    @BaseTask.register('LcCountingBoomTask')
    class LcCountingBoomTask(LcTask):
        ended = 0

        def cleanup(self):
            type(self).ended += 1
            raise RuntimeError(f'cleanup boom {type(self).ended}')

    with make_env([CountingBoomTaskCfg(robots=[rover()]) for _ in range(4)]) as env:
        env.reset()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('default')  # (a script's filter: each distinct text once per module)
            for _ in range(3):
                env.step([{'rover': {'move_by_speed': [0.3, 0.0]}}])
                env.reset([0])
    shown = [w for w in caught if 'LcCountingBoomTask.cleanup()' in str(w.message)]
    assert [str(w.message) for w in shown] == [
        f'LcCountingBoomTask.cleanup() in env 0 raised RuntimeError: cleanup boom {n}' for n in (1, 2, 3)]
    assert {w.filename for w in shown} == {__file__}  # (the env.reset line here, the user's)
    assert _kept_in_a_warning_registry('LcCountingBoomTask.cleanup()') == []

    with warnings.catch_warnings(record=True) as caught:  # (a robot's, a controller's, a sensor's)
        warnings.simplefilter('default')
        for slot in range(2):
            warn_cleanup_error(LcRobot.__new__(LcRobot), slot, RuntimeError('robot boom'))
    assert [str(w.message) for w in caught] == [f'LcRobot.cleanup() in env {slot} raised RuntimeError: robot boom'
                                                for slot in range(2)]
    assert caught[0].filename == __file__
    assert _kept_in_a_warning_registry('LcRobot.cleanup() in env') == []


# -- a controller observed once a step ----------------------------------------------------------------
COUNTS: collections.Counter = collections.Counter()


class LcTickCfg(ControllerCfg):
    type: str = 'LcTick'


@BaseController.register('LcTick')
class LcTick(BaseController):
    def __init__(self, config, robot, scene):
        super().__init__(config, robot, scene)
        self.n = 0

    def action_to_control(self, action):
        return None

    def get_obs(self):
        self.n += 1
        COUNTS['ctrl.get_obs', self.robot._slot] += 1
        return self._make_ordered({'n': self.n})


class LcReadCfg(MetricCfg):
    type: str = 'LcRead'
    name: str = 'read'


@BaseMetric.register('LcRead')
class LcRead(BaseMetric):
    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.seen = []

    def update(self, obs):
        self.seen.append(obs['jetbot']['controllers']['tick']['n'])

    def calc(self):
        return self.seen


class LcBoomCfg(SensorCfg):
    type: str = 'LcBoomSensor'


@BaseSensor.register('LcBoomSensor')
class LcBoomSensor(BaseSensor):
    def __init__(self, config, robot, scene):
        super().__init__(config, robot, scene)
        self.k = 0

    def get_data(self):
        self.k += 1
        if self._robot._slot == 0 and self.k == 3:
            raise RuntimeError('sensor boom in env 0')
        return {'k': self.k}


def test_a_controllers_get_obs_runs_once_a_step_and_a_metric_sees_the_steps_observation():
    COUNTS.clear()
    robot = JetbotRobotCfg(controllers=[WHEELS, LcTickCfg(name='tick')])
    with make_env([FiniteStepTaskCfg(max_steps=4, robots=[robot], metrics=[LcReadCfg()])]) as env:
        obs, _ = env.reset()
        assert COUNTS == {('ctrl.get_obs', 0): 1}
        seen = []
        for _ in range(4):
            COUNTS.clear()
            obs, _, _, _, info = env.step([DRIVE])
            assert COUNTS == {('ctrl.get_obs', 0): 1}
            seen.append(obs[0]['jetbot']['controllers']['tick']['n'])
        # (the metric: no update(obs) on the step the task ends the episode on, as upstream)
        assert seen == [2, 3, 4, 5] and info[0]['metrics'] == {'read': seen[:-1]}


def test_another_slots_failing_sensor_does_not_observe_a_controller_again():
    COUNTS.clear()
    robot = JetbotRobotCfg(controllers=[WHEELS, LcTickCfg(name='tick')], sensors=[LcBoomCfg(name='boom')])
    with make_env([FiniteStepTaskCfg(max_steps=10, robots=[robot])] * 2, env_num=2) as env:
        env.reset()
        for step in range(3):
            COUNTS.clear()
            obs, _, _, _, info = env.step([DRIVE, DRIVE])
            if step == 1:
                assert info[0]['failed'] == 'RuntimeError: sensor boom in env 0'
            assert COUNTS[('ctrl.get_obs', 1)] == 1
            assert COUNTS[('ctrl.get_obs', 0)] == (1 if step < 2 else 0)
            assert obs[1]['jetbot']['controllers']['tick']['n'] == step + 2


# -- readings kept for a step are read again when the state moved -------------------------------
class LcStillCfg(TaskCfg):
    type: str = 'LcStillTask'


@BaseTask.register('LcStillTask')
class LcStillTask(BaseTask):
    def is_done(self):
        return False


class LcOdoCfg(SensorCfg):
    type: str = 'LcOdo'


@BaseSensor.register('LcOdo')
class LcOdo(BaseSensor):
    def get_data(self):
        return self._make_ordered({'x': float(self._robot.articulation.get_pose()[0][0])})


class LcPoseCtrlCfg(ControllerCfg):
    type: str = 'LcPoseCtrl'


@BaseController.register('LcPoseCtrl')
class LcPoseCtrl(BaseController):
    def action_to_control(self, action):
        return None

    def get_obs(self):
        return self._make_ordered({'x': float(self.robot.get_pose()[0][0])})


@pytest.mark.parametrize('task', ['upstream', 'built-in'])
def test_a_tasks_observation_is_read_again_after_a_warm_up_and_after_a_teleport(task):
    robot = JetbotRobotCfg(controllers=[WHEELS], position=(0.0, 0.0, 0.5))
    config = LcStillCfg(robots=[robot]) if task == 'upstream' else FiniteStepTaskCfg(max_steps=100, robots=[robot])
    with make_env([config]) as env:
        obs, _ = env.reset()
        assert obs[0]['jetbot']['position'][2] > 0.5
        env.warm_up(120, render=False, physics=True)
        assert env.get_observations()[0]['jetbot']['position'][2] < 0.1  # fell to the floor
        env.step([DRIVE])
        articulation = next(iter(env.runner.current_tasks.values())).robots['jetbot'].articulation
        position, _ = articulation.get_world_pose()
        articulation.set_world_pose(position + np.array([1.0, 0.0, 0.0]))
        assert env.get_observations()[0]['jetbot']['position'][0] == pytest.approx(position[0] + 1.0)


def test_a_sensor_and_a_controller_on_a_built_in_robot_read_again_after_a_teleport():
    robot = JetbotRobotCfg(controllers=[WHEELS, LcPoseCtrlCfg(name='pose')], sensors=[LcOdoCfg(name='odo')])
    with make_env([FiniteStepTaskCfg(max_steps=50, robots=[robot])]) as env:
        env.reset()
        obs, *_ = env.step([DRIVE])
        x = obs[0]['jetbot']['position'][0]
        assert obs[0]['jetbot']['sensors']['odo']['x'] == obs[0]['jetbot']['controllers']['pose']['x'] == x
        articulation = next(iter(env.runner.current_tasks.values())).robots['jetbot'].articulation
        position, _ = articulation.get_world_pose()
        articulation.set_world_pose(position + np.array([1.0, 0.0, 0.0]))
        obs = env.get_observations()
        moved = obs[0]['jetbot']['position'][0]
        assert moved == pytest.approx(x + 1.0)
        assert obs[0]['jetbot']['sensors']['odo']['x'] == obs[0]['jetbot']['controllers']['pose']['x'] == moved


# -- a task's metrics and reward exist as it starts -----------------------------------------------
class LcTagCfg(MetricCfg):
    type: str = 'LcTag'
    name: str = 'tag'


@BaseMetric.register('LcTag')
class LcTag(BaseMetric):
    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.n = 0
        self.tag = None

    def update(self, obs):
        self.n += 1

    def calc(self):
        return {'n': self.n, 'tag': self.tag}


@BaseReward.register('LcSteps')
class LcSteps(BaseReward):
    def reset(self):
        self.n = 0

    def calc(self):
        self.n += 1
        CALLS.append((self.task.env_id, self.task.steps, self.n))
        return float(self.n)

    def _calc_next_state(self):
        return None


CALLS: list = []


class LcMetricsTaskCfg(TaskCfg):
    type: str = 'LcMetricsTask'


@BaseTask.register('LcMetricsTask')
class LcMetricsTask(BaseTask):
    def __init__(self, config, scene):
        super().__init__(config, scene)
        SEEN.append(('__init__', list(self.metrics), type(self.reward).__name__))

    def post_reset(self):
        super().post_reset()
        SEEN.append(('post_reset', list(self.metrics), type(self.reward).__name__))
        self.metrics['tag'].tag = f'set in post_reset of env {self.env_id}'
        self.reward_in_post_reset = self.reward

    def is_done(self):
        return self.steps >= 3


SEEN: list = []


def test_a_tasks_metrics_and_reward_exist_in_its_init_and_post_reset():
    SEEN.clear()
    CALLS.clear()
    reward = RewardCfg(reward_type='LcSteps', reward_settings={})
    with make_env([LcMetricsTaskCfg(robots=[JetbotRobotCfg(controllers=[WHEELS])], metrics=[LcTagCfg()], reward=reward)]) as env:
        env.reset()
        task = next(iter(env.runner.current_tasks.values()))
        assert task.reward is task.reward_in_post_reset  # the reward the env calls is the one made in __init__
        rewards = []
        for _ in range(3):
            _, r, terminated, _, info = env.step([DRIVE])
            rewards.append(float(r[0]))
    assert SEEN == [('__init__', ['tag'], 'LcSteps'), ('post_reset', ['tag'], 'LcSteps')]
    assert info[0]['metrics'] == {'tag': {'n': 2, 'tag': 'set in post_reset of env 0'}}
    # InternUtopia calls no reward on the step the task ends the episode (here that step's reward is 0.0)
    assert terminated[0] and rewards == [1.0, 2.0, 0.0] and CALLS == [(0, 1, 1), (0, 2, 2)]


# -- wrong return types ---------------------------------------------------------------------------
CASE: list = ['']


class LcBadCfg(TaskCfg):
    type: str = 'LcBadTask'


@BaseTask.register('LcBadTask')
class LcBadTask(BaseTask):
    def is_done(self):
        return {'is_done_array': np.array([False, True]), 'is_done_str': 'no'}.get(CASE[0], self.steps >= 3)

    def get_observations(self):
        return None if CASE[0] == 'obs_none' else super().get_observations()


@BaseReward.register('LcBadReward')
class LcBadReward(BaseReward):
    def calc(self):
        return {'reward_str': 'high', 'reward_array': np.array([1.0, 2.0])}.get(CASE[0], 0.5)

    def _calc_next_state(self):
        return None


@pytest.mark.parametrize(('case', 'error'), [
    ('is_done_array', 'TypeError: LcBadTask.is_done() in env 0 returned ndarray; expected a bool'),
    ('is_done_str', 'TypeError: LcBadTask.is_done() in env 0 returned str; expected a bool'),
    ('reward_str', 'TypeError: LcBadReward.calc() in env 0 returned str; expected a number'),
    ('reward_array', 'TypeError: LcBadReward.calc() in env 0 returned ndarray of shape (2,); expected a number'),
])
def test_a_wrong_return_type_fails_the_episode_naming_the_class_the_method_and_the_env(case, error, tmp_path):
    CASE[0] = case
    path = tmp_path / 'records.jsonl'
    task = LcBadCfg(robots=[JetbotRobotCfg(controllers=[WHEELS])], reward=RewardCfg(reward_type='LcBadReward'))
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, task_configs=[task],
                    metrics_save_path=str(path))) as env:
        env.reset()
        _, reward, terminated, _, info = env.step([DRIVE])
    assert terminated[0] and reward[0] == 0.0 and info[0]['failed'] == error
    record = path.read_text().strip()
    assert '"outcome": "failed"' in record and error.split(': ', 1)[1] in record


def test_get_observations_returning_none_fails_the_start_naming_the_class(tmp_path):
    CASE[0] = 'obs_none'
    path = tmp_path / 'records.jsonl'
    task = LcBadCfg(robots=[JetbotRobotCfg(controllers=[WHEELS])])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, task_configs=[task],
                        metrics_save_path=str(path))) as env:
            obs, _ = env.reset()
    assert obs == [None]
    assert ('LcBadTask.get_observations() in env 0 returned NoneType; expected a dict' in path.read_text())
