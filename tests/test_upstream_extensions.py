"""Extension classes written InternUtopia's way (one object per slot) run through per-slot adapters.

The classes below follow InternUtopia's extension API (constructors taking a ``scene``, methods
without slot arguments, upstream's decorators and module paths); they are written here, in our
own words, the way an extension package for InternUtopia writes them.
"""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.metric import MetricCfg
from internutopia.core.config.robot import ControllerCfg, RobotCfg
from internutopia.core.config.sensor import SensorCfg
from internutopia.core.config.task import TaskCfg
from internutopia.core.config.task.reward import RewardCfg
from internutopia.core.robot.articulation_action import ArticulationAction
from internutopia.core.robot.articulation_subset import ArticulationSubset
from internutopia.core.robot.controller import BaseController
from internutopia.core.robot.robot import BaseRobot
from internutopia.core.scene.scene import IScene
from internutopia.core.sensor.sensor import BaseSensor
from internutopia.core.task import BaseMetric, BaseTask
from internutopia.core.task.reward import BaseReward
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.robots.jetbot import JetbotRobot

WHEELS = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)


# -- an extension package, InternUtopia-style ---------------------------------------------------
class TallyRobotCfg(RobotCfg):
    name: str = 'rover'
    type: str = 'TallyRobot'
    prim_path: str = '/rover'


class TallyTaskCfg(TaskCfg):
    type: str = 'TallyTask'
    tag: int
    length: int = 4


@BaseRobot.register('TallyRobot')
class TallyRobot(JetbotRobot):
    """Remembers the tags it was sent; drives with the rest of the action."""

    def __init__(self, config, scene: IScene):
        super().__init__(config, scene)
        self.tags = []

    def apply_action(self, action: dict):
        self.tags.append(action.get('tag'))
        super().apply_action({k: v for k, v in action.items() if k != 'tag'})

    def get_obs(self):
        obs = super().get_obs()
        return self._make_ordered({'tags': list(self.tags), 'x': float(obs['position'][0])})


@BaseTask.register('TallyTask')
class TallyTask(BaseTask):
    """Ends after ``length`` steps; shows its tag next to the robot's observation."""

    def __init__(self, config, scene: IScene):
        super().__init__(config, scene)
        self.tag = config.tag

    def get_observations(self):
        obs = super().get_observations()
        obs['rover']['tag'] = self.tag
        return obs

    def is_done(self):
        return self.steps >= self.config.length

    def calculate_metrics(self):
        return {'tags_seen': len(self.robots['rover'].tags)}


class SpinCfg(ControllerCfg):
    type: str = 'SpinController'
    wheel_speed: float = 10.0


@BaseController.register('SpinController')
class SpinController(BaseController):
    """Spins the wheels in opposite directions: an ArticulationAction of joint velocities."""

    def __init__(self, config, robot, scene):
        super().__init__(config, robot, scene)
        self.joint_subset = ArticulationSubset(robot.articulation, ['left_wheel_joint', 'right_wheel_joint'])
        self.calls = 0

    def action_to_control(self, action):
        self.calls += 1
        speed = self.config.wheel_speed * float(action[0])
        return self.joint_subset.make_articulation_action(None, [-speed, speed])

    def get_obs(self):
        return self._make_ordered({'calls': self.calls})


class OdometerCfg(SensorCfg):
    type: str = 'Odometer'


@BaseSensor.register('Odometer')
class Odometer(BaseSensor):
    def get_data(self):
        position, _ = self._robot.articulation.get_pose()
        return self._make_ordered({'x': float(position[0])})


class PathLengthCfg(MetricCfg):
    type: str = 'PathLength'
    name: str = 'path_length'


@BaseMetric.register('PathLength')
class PathLength(BaseMetric):
    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.last = None
        self.total = 0.0

    def update(self, obs):
        position = np.asarray(obs['jetbot']['position'])
        if self.last is not None:
            self.total += float(np.linalg.norm(position - self.last))
        self.last = position

    def calc(self):
        return round(self.total, 6)


@BaseReward.register('ForwardReward')
class ForwardReward(BaseReward):
    def reset(self):
        self.state = None

    def calc(self):
        x = float(self.task.robots['jetbot'].get_obs()['position'][0])
        previous, self.state = self.state, x
        return 0.0 if previous is None else self.settings['scale'] * (x - previous)

    def _calc_next_state(self):
        return None


# -- tests ------------------------------------------------------------------------------------------
def config(tasks, env_num=2):
    return Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, metrics_save_path='none', task_configs=tasks)


def test_per_slot_robot_and_task_see_their_own_slot_and_episode():
    tasks = [TallyTaskCfg(tag=k, length=3 + k % 2, robots=[TallyRobotCfg(controllers=[WHEELS])]) for k in range(5)]
    with Env(config(tasks)) as env:
        obs, _ = env.reset()
        assert [o['rover']['tag'] for o in obs] == [0, 1] and obs[0]['rover']['tags'] == []
        tags = [0, 1]
        ended, no_more = [], False
        for _ in range(40):
            actions = [{'rover': {'tag': t, 'move_by_speed': [0.4, 0.0]}} if t is not None else None for t in tags]
            obs, _, terminated, _, info = env.step(actions)
            for slot, (o, t) in enumerate(zip(obs, terminated, strict=True)):
                if t and o is not None:
                    assert o['rover']['tags'] == [tags[slot]] * (3 + tags[slot] % 2)  # only its own, this episode
                    assert info[slot]['metrics'] == {'tags_seen': 3 + tags[slot] % 2}
                    ended.append(tags[slot])
            if all(terminated) and no_more:
                break
            done = [slot for slot, t in enumerate(terminated) if t and obs[slot] is not None]
            if done:
                new_obs, new_info = env.reset(env_ids=done)
                for slot, o in zip(done, new_obs, strict=True):
                    tags[slot] = o['rover']['tag'] if o is not None else None
                    assert o is None or o['rover']['tags'] == []  # a new instance per episode
                no_more = None in new_info
        assert sorted(ended) == [0, 1, 2, 3, 4]
        assert obs == [None, None] or all(t for t in terminated)


def test_per_slot_robot_cannot_take_batched_actions():
    with Env(config([TallyTaskCfg(tag=0, robots=[TallyRobotCfg(controllers=[WHEELS])])], env_num=1)) as env:
        env.reset()
        with pytest.raises(ValueError, match='upstream-style.*TallyRobot.*step'):
            env.step_arrays({'rover': {'move_by_speed': np.zeros((1, 2))}})


def test_per_slot_controller_sensor_metric_and_reward_on_built_in_types():
    robot = JetbotRobotCfg(controllers=[WHEELS, SpinCfg(name='spin')], sensors=[OdometerCfg(name='odometer')])
    tasks = [FiniteStepTaskCfg(max_steps=120, robots=[robot], metrics=[PathLengthCfg()],
                               reward=RewardCfg(reward_type='ForwardReward', reward_settings={'scale': 10.0}))] * 2
    with Env(config(tasks)) as env:
        env.reset()
        total = [0.0, 0.0]
        xs = []
        for _ in range(120):
            # slot 0 drives forward, slot 1 spins in place with the upstream-style controller
            obs, reward, terminated, _, info = env.step([{'jetbot': {'move_by_speed': [0.3, 0.0]}},
                                                        {'jetbot': {'spin': [1.0]}}])
            total = [t + r for t, r in zip(total, reward, strict=True)]
            xs.append(obs[0]['jetbot']['position'][0])
        drove, spun = obs[0]['jetbot'], obs[1]['jetbot']
        assert drove['position'][0] > 0.05 and np.linalg.norm(spun['position'][:2]) < 0.5 * drove['position'][0]
        assert abs(spun['orientation'][3]) > 0.3  # turned about z
        assert abs(spun['joint_velocities'][0] + spun['joint_velocities'][1]) < 1.0 < abs(spun['joint_velocities'][1])
        assert spun['controllers']['spin'] == {'calls': 120} and drove['controllers']['spin'] == {'calls': 0}
        assert drove['sensors']['odometer']['x'] == pytest.approx(drove['position'][0])
        # the per-slot reward, summed: 0 on step 1, and not asked on step 120, which ends the episode (as upstream)
        assert total[0] == pytest.approx(10.0 * xs[-2], rel=1e-3) and xs[-2] < xs[-1]
        assert info[0]['metrics']['path_length'] > 0.05 and terminated == [True, True]


def test_runner_level_access_to_per_slot_objects():
    tasks = [FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg(controllers=[WHEELS], position=(0.5, 0.0, 0.0))])] * 2
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, env_offset_size=4, metrics_save_path='none',
                    task_configs=tasks)) as env:
        env.reset()
        names = list(env.runner.current_tasks)
        assert len(names) == 2 and env.runner.task_name_to_env_id_map[names[1]] == 1
        robot = env.runner.current_tasks[names[1]].robots['jetbot']
        world, local = robot.articulation.get_world_pose()[0], robot.articulation.get_pose()[0]
        np.testing.assert_allclose(world - local, env.runner.view.origin(1))
        assert np.linalg.norm(world - local) == 4  # the slot's grid origin, 4 m away
        assert robot.articulation.dof_names == ['left_wheel_joint', 'right_wheel_joint']
        robot.articulation.set_world_pose(world + [1.0, 0.0, 0.0])
        obs = env.get_observations()
        assert obs[1]['jetbot']['position'][0] == pytest.approx(1.5, abs=1e-6)
        assert env.runner.get_obj('jetbot').get_pose()[0][0] == pytest.approx(0.5, abs=1e-3)  # slot 0 untouched
        with pytest.raises(ValueError, match="no servo|position servo"):
            robot.articulation.apply_action(ArticulationAction(joint_positions=[0.1, 0.1]))
        task = env.runner.current_tasks[names[0]]
        assert task.env_id == 0 and task.is_done() is False and 'jetbot' in task.get_observations()


def test_camera_seen_from_a_slot_moves_and_gives_a_pointcloud():
    from internutopia.core.sensor.camera import ICamera
    from internutopia_extension.configs.objects import DynamicCubeCfg
    from internutopia_extension.configs.robots.jetbot import jetbot_camera_cfg

    camera = jetbot_camera_cfg.update(resolution=(64, 48), depth=True, pointcloud=True)
    cube = DynamicCubeCfg(name='box', position=(1.0, 0.0, 0.25), scale=(0.5, 0.5, 0.5), color=(0.8, 0.2, 0.2))
    task = FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg(sensors=[camera])], objects=[cube])
    with Env(config([task] * 2)) as env:
        obs, _ = env.reset()
        reading = obs[1]['jetbot']['sensors']['camera']
        assert sorted(reading) == ['camera_params', 'depth', 'pointcloud', 'rgba']  # InternUtopia's keys (a point cloud brings its params), no more
        points = reading['pointcloud']
        assert points.dtype == np.float32 and points.shape[1] == 3 and len(points) > 0.5 * 64 * 48  # the rest is sky
        on_box = points[(np.abs(points[:, 1]) < 0.2) & (points[:, 2] > 0.05)]
        assert len(on_box) > 50 and np.all(np.abs(on_box[:, 0] - 0.75) < 0.02)  # the box's near face, env-local
        view = next(iter(env.runner.current_tasks.values())).robots['jetbot'].sensors['camera']
        assert isinstance(view, ICamera)
        above = np.array([0.0, 0.0, 3.0]) + env.runner.view.origin(0)
        view.set_world_pose(above, [1.0, 0.0, 0.0, 0.0])  # the identity: a camera looks along its -z, so down
        np.testing.assert_allclose(view.get_world_pose()[0], above, atol=1e-6)
        obs, *_ = env.step([None, None])
        seen = obs[0]['jetbot']['sensors']['camera']['pointcloud']
        assert np.all(np.abs(seen[:, 2]) < 0.6)  # looking straight down from 3 m: floor and box top only
        assert obs[1]['jetbot']['sensors']['camera']['pointcloud'][:, 0].min() > 0.0  # slot 1 still looks ahead


class CruiseCfg(ControllerCfg):
    type: str = 'CruiseController'
    speed: float = 0.3


@BaseController.register('CruiseController')
class CruiseController(BaseController):
    """Upstream's composite pattern: drives its move-by-speed sub-controller with ``forward``."""

    def action_to_control(self, action):
        return self.sub_controllers[0].forward(forward_speed=self.config.speed * float(action[0]), rotation_speed=0.0)


def test_a_composite_controller_drives_its_move_by_speed_sub_controller_with_forward():
    cruise = CruiseCfg(name='cruise', sub_controllers=[WHEELS])
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.0), controllers=[cruise, WHEELS])
    with Env(config([FiniteStepTaskCfg(max_steps=1000, robots=[robot])], env_num=1)) as env:
        obs, _ = env.reset()
        start = np.array(obs[0]['jetbot']['position'])
        for _ in range(240):
            obs, *_ = env.step([{'jetbot': {'cruise': [1.0]}}])
        moved = np.array(obs[0]['jetbot']['position']) - start
        assert moved[0] > 0.1 and abs(moved[1]) < 0.05  # straight ahead (+x), a second at 0.3 m/s
        view = env.runner.current_tasks[next(iter(env.runner.current_tasks))].robots['jetbot'].controllers['cruise']
        with pytest.raises(ValueError, match='finite'):
            view.sub_controllers[0].forward(forward_speed=float('nan'))


def test_an_h1_subclass_finds_its_links_by_prim_path_in_post_reset():
    from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
    from internutopia_extension.robots.h1 import H1Robot

    @BaseRobot.register('AnkleH1')
    class AnkleH1(H1Robot):
        """InternNav's pattern: links looked up by prim path when the episode starts."""

        def __init__(self, config, scene):
            super().__init__(config, scene)

        def post_reset(self):
            super().post_reset()
            self.torso = self._rigid_body_map[self.config.prim_path + '/torso_link']
            self.ankles = [self._rigid_body_map[self.config.prim_path + f'/{side}_ankle_link'] for side in ('left', 'right')]

        def get_ankle_height(self):
            return min(ankle.get_pose()[0][2] for ankle in self.ankles)

        def get_obs(self):
            obs = super().get_obs()
            obs['ankle_height'] = self.get_ankle_height()
            obs['torso_z'] = float(self.torso.get_pose()[0][2])
            obs['base'] = self.get_pose()[0]
            obs['upstream_ankle_height'] = H1Robot.upstream_methods.get_ankle_height(self)  # H1's own, as InternUtopia's H1 has it
            obs['upstream_base'] = self._robot_base.get_pose()[0]  # set by H1's post_reset
            return obs

    h1 = H1RobotCfg(type='AnkleH1', position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg])
    with Env(config([FiniteStepTaskCfg(max_steps=100, robots=[h1])], env_num=1)) as env:
        env.reset()
        obs, *_ = env.step([{'h1': {'move_by_speed': [0.0, 0.0, 0.0]}}])
        robot = obs[0]['h1']
        assert 0.0 < robot['ankle_height'] < 0.2 < robot['torso_z']  # ankles near the floor, torso above them
        np.testing.assert_allclose(robot['base'], robot['position'])
        assert robot['upstream_ankle_height'] == pytest.approx(robot['ankle_height'])
        np.testing.assert_allclose(robot['upstream_base'], robot['position'])


def test_a_built_in_h1_seen_from_a_slot_has_internutopias_h1_methods():
    from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg

    h1 = H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg])
    with Env(config([FiniteStepTaskCfg(max_steps=100, robots=[h1])], env_num=1)) as env:
        env.reset()
        obs, *_ = env.step([{'h1': {'move_by_speed': [0.0, 0.0, 0.0]}}])
        robot = env.runner.current_tasks[next(iter(env.runner.current_tasks))].robots['h1']
        assert 0.0 < robot.get_ankle_height() < 0.2
        np.testing.assert_allclose(robot._robot_base.get_pose()[0], obs[0]['h1']['position'])
        robot.set_gains()  # InternUtopia's H1 sets its gains in post_reset; here the model has them
        # Unitree's imu_link (InternNav reads it): on the torso, 0.28 m above the torso link's origin.
        imu, torso = robot._rigid_body_map['/h1/imu_link'], robot._rigid_body_map['/h1/torso_link']
        assert 0.25 < imu.get_pose()[0][2] - torso.get_pose()[0][2] < 0.3


class ResetCounterCfg(SensorCfg):
    type: str = 'ResetCounter'


@BaseSensor.register('ResetCounter')
class ResetCounter(BaseSensor):
    """Counts its post_reset calls (InternUtopia calls it once when the episode starts)."""

    def __init__(self, config, robot, scene):
        super().__init__(config, robot, scene)
        self.resets = 0

    def post_reset(self):
        self.resets += 1

    def get_data(self):
        return {'resets': self.resets}


def test_a_custom_sensor_on_a_built_in_robot_gets_post_reset_once_per_episode():
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.0), controllers=[WHEELS], sensors=[ResetCounterCfg(name='counter')])
    task = FiniteStepTaskCfg(max_steps=3, robots=[robot])
    with Env(config([task, task], env_num=1)) as env:
        obs, _ = env.reset()
        assert obs[0]['jetbot']['sensors']['counter'] == {'resets': 1}
        for _ in range(2):
            obs, *_ = env.step([None])
        assert obs[0]['jetbot']['sensors']['counter'] == {'resets': 1}  # once, not per step
        obs, _ = env.reset()  # the next episode: a new sensor object, reset once
        assert obs[0]['jetbot']['sensors']['counter'] == {'resets': 1}


def test_rigid_body_frames_of_a_turned_robot():
    """A body's local pose is in its parent's frame, and a base's angular velocity is set in world axes."""
    turned = JetbotRobotCfg(position=(0.0, 0.0, 0.0), orientation=(np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)),
                            controllers=[WHEELS])
    with Env(config([FiniteStepTaskCfg(max_steps=100, robots=[turned])], env_num=1)) as env:
        env.reset()
        robot = next(iter(env.runner.current_tasks.values())).robots['jetbot']
        wheel = robot._rigid_body_map['/jetbot/left_wheel']
        position, orientation = wheel.get_local_pose()
        assert position[1] == pytest.approx(0.1125 / 2, abs=1e-6)  # left of the chassis, whatever its heading
        np.testing.assert_allclose(orientation, [1.0, 0.0, 0.0, 0.0], atol=1e-6)
        base = robot.get_robot_base()
        base.set_angular_velocity([0.0, 0.0, 1.0])
        np.testing.assert_allclose(base.get_angular_velocity(), [0.0, 0.0, 1.0], atol=1e-9)


class OffByDefaultCfg(SensorCfg):
    """InternManip's sensor configs declare their own ``enable`` defaulting to off."""

    type: str = 'OffByDefault'
    enable: bool = False


@BaseSensor.register('OffByDefault')
class OffByDefault(BaseSensor):
    def get_data(self):
        return {'enabled': self.config.enable}


def test_a_custom_sensor_is_built_whatever_its_enable_says_and_a_disabled_camera_is_not():
    from internutopia_extension.configs.sensors import RepCameraCfg

    off_camera = RepCameraCfg(name='camera', prim_path='chassis/Camera', resolution=(64, 48), enable=False)
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.0), controllers=[WHEELS],
                           sensors=[OffByDefaultCfg(name='probe'), off_camera])
    with Env(config([FiniteStepTaskCfg(max_steps=3, robots=[robot])], env_num=1)) as env:
        obs, _ = env.reset()
        obs, *_ = env.step([None])
        sensors = obs[0]['jetbot']['sensors']
        assert sensors == {'probe': {'enabled': False}}  # built (InternUtopia builds every sensor), camera gone
        assert env.runner.world.pack(0).model.ncam == 0  # the disabled camera added nothing to the model


def test_isaac_articulation_calls_extensions_reach_through_articulation():
    """InternNav's flash controller resets the robot through ``articulation._articulation``."""
    robot_cfg = JetbotRobotCfg(position=(0.0, 0.0, 0.0), controllers=[WHEELS])
    task = FiniteStepTaskCfg(max_steps=100, robots=[robot_cfg])
    with Env(config([task, task], env_num=2)) as env:
        env.reset()
        env.step([None, None])
        robot = env.runner.current_tasks[env.runner.env_id_to_task_name_map[0]].robots['jetbot']
        articulation = robot.articulation._articulation
        assert articulation is robot.articulation
        articulation.set_world_velocity(np.array([0.4, 0.0, 0.0, 0.0, 0.0, 0.0]))
        np.testing.assert_allclose(articulation.get_linear_velocity(), [0.4, 0.0, 0.0], atol=1e-4)  # (at the base frame)
        # (turning: read apart, since the base frame, between the wheels, is not where MuJoCo's free joint
        # takes its linear velocity)
        articulation.set_world_velocity(np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.5]))
        np.testing.assert_allclose(articulation.get_angular_velocity(), [0.0, 0.0, 1.5], atol=1e-9)
        with pytest.raises(ValueError, match='6 finite numbers'):
            articulation.set_world_velocity([0.0, float('nan'), 0.0, 0.0, 0.0, 0.0])
        articulation.set_world_velocity(np.zeros(6))
        articulation.set_joint_efforts(np.array([0.02, 0.02]))  # both wheels driven forward by a torque
        for _ in range(30):
            env.step([None, None])
        wheels = articulation.get_joint_velocities()
        # (the stopped wheel servo, kv 0.1 N m s/rad, and the joint damping, 0.001, hold the torque at
        # 0.02 / 0.101 rad/s: the effort reached the wheels)
        np.testing.assert_allclose(wheels, 0.02 / 0.101, rtol=0.02)
        other = env.runner.current_tasks[env.runner.env_id_to_task_name_map[1]].robots['jetbot']
        assert np.all(np.abs(other.articulation.get_joint_velocities()) < 0.05)  # the other slot is untouched (settling only)


class SelfCountingTaskCfg(TaskCfg):
    type: str = 'SelfCountingTask'
    length: int = 6


@BaseTask.register('SelfCountingTask')
class SelfCountingTask(BaseTask):
    """Counts steps in is_done on top of pre_step's count, as InternManip's manipulation task does."""

    def is_done(self):
        self.steps = self.steps + 1
        return self.steps > self.config.length


def test_a_task_that_counts_steps_itself_counts_on_top_of_pre_step():
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.0), controllers=[WHEELS])
    with Env(config([SelfCountingTaskCfg(robots=[robot])], env_num=1)) as env:
        env.reset()
        ended = None
        for step in range(1, 10):
            _, _, terminated, _, _ = env.step([None])
            if terminated[0]:
                ended = step
                break
    assert ended == 4  # InternUtopia counts one a step in pre_step, the task one more: 2 * 4 > 6


class NeedsUpdatesCfg(MetricCfg):
    type: str = 'NeedsUpdates'
    name: str = 'needs_updates'


@BaseMetric.register('NeedsUpdates')
class NeedsUpdates(BaseMetric):
    """Like InternNav's metrics: ``calc`` assumes ``update`` ran (InternUtopia asks it at the end only)."""

    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.best = None

    def update(self, obs):
        self.best = 1.0

    def calc(self):
        return {'close': self.best < 2.0}


def test_resetting_a_slot_before_its_episode_stepped_does_not_ask_metrics_that_cannot_answer(tmp_path):
    import json

    task = FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg(controllers=[WHEELS])], metrics=[NeedsUpdatesCfg()])
    path = tmp_path / 'results.jsonl'
    cfg = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path=str(path), task_configs=[task] * 2)
    with Env(cfg) as env:
        env.reset()
        env.reset()  # episode 0 is abandoned before its first step
        for _ in range(3):
            env.step([None])
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r['episode_index'] for r in records] == [0, 1]
    assert records[0]['outcome'] == 'abandoned' and records[0]['metrics'] is None
    assert records[0]['metrics_error'].startswith('TypeError')
    assert records[1]['metrics'] == {'needs_updates': {'close': True}}


# -- hooks run once: per-slot faults, post_reset, observations, targets --------------------------------
#: ``{(hook, slot): calls}`` of the classes below, and ``{(hook, slot): call}`` from which a hook raises.
HOOKS: dict = {}
FAIL: dict = {}


def _hook(name, slot):
    """Count a call of hook ``name`` in ``slot``; raise from the call ``FAIL`` names for it."""
    calls = HOOKS[name, slot] = HOOKS.get((name, slot), 0) + 1
    if FAIL.get((name, slot)) is not None and calls >= FAIL[name, slot]:
        raise RuntimeError(f'{name} broke in env {slot}')
    return calls


@pytest.fixture
def hooks():
    HOOKS.clear()
    FAIL.clear()
    yield HOOKS
    HOOKS.clear()
    FAIL.clear()


class HookWheelsCfg(ControllerCfg):
    type: str = 'HookWheels'
    targets: str = 'ok'  # ok | nan32 | inf | short


@BaseController.register('HookWheels')
class HookWheels(BaseController):
    def action_to_control(self, action):
        slot = self.robot.articulation.env_id
        _hook('action_to_control', slot)
        speed = float(action[0])
        values = {'ok': [speed, speed], 'nan32': [np.float32('nan')] * 2, 'inf': [np.inf, speed],
                  'short': [speed]}[self.config.targets]
        return ArticulationAction(joint_velocities=values)


class HookSensorCfg(SensorCfg):
    type: str = 'HookSensor'


@BaseSensor.register('HookSensor')
class HookSensor(BaseSensor):
    def post_reset(self):
        _hook('sensor.post_reset', self._robot.articulation.env_id)

    def get_data(self):
        return {'reads': _hook('get_data', self._robot.articulation.env_id)}


class HookRobotCfg(JetbotRobotCfg):
    name: str = 'courier'
    type: str = 'HookRobot'


@BaseRobot.register('HookRobot')
class HookRobot(JetbotRobot):
    def apply_action(self, action):
        _hook('apply_action', self.articulation.env_id)
        super().apply_action(action)

    def get_obs(self):
        obs = super().get_obs()
        obs['obs_calls'] = _hook('get_obs', self.articulation.env_id)
        return obs

    def post_reset(self):
        super().post_reset()
        _hook('robot.post_reset', self.articulation.env_id)


class HookTaskCfg(TaskCfg):
    type: str = 'HookTask'
    length: int = 4


@BaseTask.register('HookTask')
class HookTask(BaseTask):
    def pre_step(self, time_step_index, simulation_time):
        super().pre_step(time_step_index, simulation_time)
        _hook('pre_step', self.env_id)

    def is_done(self):
        _hook('is_done', self.env_id)
        return self.steps >= self.config.length


class HookMetricCfg(MetricCfg):
    type: str = 'HookMetric'
    name: str = 'updates'


@BaseMetric.register('HookMetric')
class HookMetric(BaseMetric):
    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.updates = 0

    def update(self, obs):
        self.updates += 1
        _hook('update', self.env_id)

    def calc(self):
        return self.updates


@BaseReward.register('HookReward')
class HookReward(BaseReward):
    def reset(self):
        self.state = None

    def calc(self):
        return 0.5 * _hook('calc', self.task.env_id)  # 0.5, 1.0, 1.5, ...: a second call shows

    def _calc_next_state(self):
        return None


def hook_task(robot='per-slot', task='per-slot', targets='ok', reward=True, length=4):
    sensors = [HookSensorCfg(name='odo')]
    if robot == 'per-slot':
        robot_cfg = HookRobotCfg(controllers=[WHEELS, HookWheelsCfg(name='wheels', targets=targets)], sensors=sensors)
    else:
        robot_cfg = JetbotRobotCfg(name='courier', controllers=[WHEELS, HookWheelsCfg(name='wheels', targets=targets)],
                                   sensors=sensors)
    if task == 'per-slot':
        return HookTaskCfg(length=length, robots=[robot_cfg], metrics=[HookMetricCfg()],
                           reward=RewardCfg(type='HookReward', reward_settings={}) if reward else None)
    return FiniteStepTaskCfg(max_steps=length, robots=[robot_cfg], metrics=[HookMetricCfg()])


def run_hook_episodes(env_num=3, steps=5, **kw):
    """Run ``env_num`` episodes of :func:`hook_task` side by side; per slot, its rewards, the step
    its episode ended on, its info then, and the hook calls counted."""
    ran = {slot: {'rewards': [], 'ended': None, 'info': None} for slot in range(env_num)}
    with Env(config([hook_task(**kw)] * env_num, env_num=env_num)) as env:
        env.reset()
        for step in range(1, steps + 1):
            _, reward, terminated, _, info = env.step([{'courier': {'wheels': [1.0]}}] * env_num)
            for slot in range(env_num):
                if ran[slot]['ended'] is None:
                    ran[slot]['rewards'].append(reward[slot])
                    if terminated[slot]:
                        ran[slot]['ended'], ran[slot]['info'] = step, info[slot]
    return ran, dict(HOOKS)


@pytest.mark.parametrize('hook', ['is_done', 'pre_step', 'action_to_control', 'apply_action', 'calc', 'update',
                                  'get_obs', 'get_data'])
def test_one_slots_failing_hook_ends_its_episode_and_the_others_run_every_hook_once(hooks, hook):
    """docs/reliability.md: one slot's error ends its episode; every other slot's step is as if
    nothing had happened (a per-slot adapter runs each slot once, it is not run again slot by slot)."""
    clean, clean_hooks = run_hook_episodes()
    HOOKS.clear()
    FAIL[hook, 1] = 2 + (hook in ('get_obs', 'get_data'))  # its 2nd step (observations: the reset's counts too)
    ran, counted = run_hook_episodes()
    assert ran[1]['ended'] == 2 and ran[1]['info']['failed'] == f'RuntimeError: {hook} broke in env 1'
    assert ran[1]['rewards'][-1] == 0.0
    for slot in (0, 2):
        # (InternUtopia calls neither a reward's calc nor a metric's update on the step its task ends the episode)
        assert ran[slot]['ended'] == 4 and ran[slot]['rewards'] == clean[slot]['rewards'] == [0.5, 1.0, 1.5, 0.0]
        assert ran[slot]['info']['metrics'] == clean[slot]['info']['metrics'] == {'updates': 3}
        assert 'failed' not in ran[slot]['info']
        for name in ('pre_step', 'is_done', 'apply_action', 'action_to_control', 'calc', 'update', 'get_obs',
                     'get_data', 'robot.post_reset', 'sensor.post_reset'):
            assert counted.get((name, slot)) == clean_hooks.get((name, slot)), (name, slot)
    assert clean_hooks['pre_step', 0] == clean_hooks['is_done', 0] == clean_hooks['apply_action', 0] == 4
    assert clean_hooks['calc', 0] == 3 and clean_hooks['update', 0] == 3
    assert clean_hooks['get_obs', 0] == clean_hooks['get_data', 0] == 5  # the reset's and each step's, once


@pytest.mark.parametrize('hook', ['get_obs', 'get_data', 'update'])
def test_one_slots_failing_hook_under_a_built_in_task_leaves_the_others_alone(hooks, hook):
    clean, clean_hooks = run_hook_episodes(task='built-in')
    HOOKS.clear()
    FAIL[hook, 1] = 2 + (hook in ('get_obs', 'get_data'))
    ran, counted = run_hook_episodes(task='built-in')
    assert ran[1]['ended'] == 2 and ran[1]['info']['failed'] == f'RuntimeError: {hook} broke in env 1'
    for slot in (0, 2):
        assert ran[slot]['ended'] == 4 and ran[slot]['info']['metrics'] == clean[slot]['info']['metrics']
        for name in ('apply_action', 'action_to_control', 'update', 'get_obs', 'get_data'):
            assert counted.get((name, slot)) == clean_hooks.get((name, slot)), (name, slot)
    assert clean_hooks['get_obs', 0] == clean_hooks['get_data', 0] == 5


@pytest.mark.parametrize(('robot', 'task'), [('per-slot', 'per-slot'), ('per-slot', 'built-in'), ('built-in', 'per-slot'),
                                             ('built-in', 'built-in')])
def test_post_reset_runs_once_per_episode_and_get_obs_and_get_data_once_per_step(hooks, robot, task):
    """As InternUtopia: ``task.post_reset`` -> ``robot.post_reset`` -> the sensors', once per
    episode; each step observes a robot once (``get_obs``, its sensors' ``get_data``), whoever reads
    it (the step's observation, the task's ``get_observations``, a metric's ``update``)."""
    with Env(config([hook_task(robot=robot, task=task, reward=False, length=10)] * 6, env_num=3)) as env:
        obs, _ = env.reset()
        for slot in range(3):
            if robot == 'per-slot':
                assert HOOKS['robot.post_reset', slot] == 1
                assert obs[slot]['courier']['obs_calls'] == 1
            assert HOOKS['sensor.post_reset', slot] == 1 and HOOKS['get_data', slot] == 1
            assert obs[slot]['courier']['sensors']['odo'] == {'reads': 1}
        for step in range(2, 5):
            obs, *_ = env.step([{'courier': {'wheels': [1.0]}}] * 3)
            for slot in range(3):
                assert obs[slot]['courier']['sensors']['odo'] == {'reads': step}
                assert HOOKS['get_data', slot] == step
                if robot == 'per-slot':
                    assert obs[slot]['courier']['obs_calls'] == HOOKS['get_obs', slot] == step
        assert HOOKS.get(('robot.post_reset', 0), 0) == (1 if robot == 'per-slot' else 0)
        assert HOOKS['sensor.post_reset', 0] == 1
        HOOKS.clear()
        obs, _ = env.reset([1])  # the slot's next episode: its post_reset once again
        assert HOOKS['sensor.post_reset', 1] == 1 and HOOKS.get(('sensor.post_reset', 0)) is None
        assert HOOKS.get(('robot.post_reset', 1)) == (1 if robot == 'per-slot' else None)
        assert len(obs) == 1 and obs[0]['courier']['sensors']['odo'] == {'reads': 1}  # (the reset slots' observations)


def test_nan_targets_keep_a_joints_target_whatever_their_type_and_inf_is_an_error():
    with Env(config([hook_task(reward=False, length=50)], env_num=1)) as env:
        env.reset()
        robot = next(iter(env.runner.current_tasks.values())).robots['courier']
        articulation = robot.articulation
        ctrl = articulation.group.bound_world.data.ctrl
        wheels = [a for a in articulation._servos()['velocity'].tolist() if a >= 0]
        for kept in ([float('nan')] * 2, [np.float32('nan')] * 2, np.full(2, np.nan, np.float32),
                     np.full(2, np.nan), [None, np.float64('nan')], np.array([None, np.nan], dtype=object)):
            articulation.apply_action(ArticulationAction(joint_velocities=[5.0, 6.0]))
            articulation.apply_action(ArticulationAction(joint_velocities=kept))
            assert ctrl[0, wheels].tolist() == [5.0, 6.0], kept
        articulation.apply_action(ArticulationAction(joint_velocities=[np.float32(1.5), np.float32('nan')]))
        assert ctrl[0, wheels].tolist() == [1.5, 6.0]
        for bad in ([np.inf, 1.0], [1.0, np.float32('-inf')], np.array([np.inf, 0.0], np.float32)):
            with pytest.raises(ValueError, match=r"joint_velocities for robot 'courier' in env 0: joint "
                                                 r"'(left|right)_wheel_joint' has target -?inf; targets must be finite"):
                articulation.apply_action(ArticulationAction(joint_velocities=bad))
            assert ctrl[0, wheels].tolist() == [1.5, 6.0]  # nothing written
        with pytest.raises(ValueError, match=r"joint_efforts for robot 'courier' in env 0: joint 'left_wheel_joint'"):
            articulation.apply_action(ArticulationAction(joint_efforts=[np.inf, 0.0]))
        with pytest.raises(ValueError, match=r"joint_velocities for robot 'courier' in env 0 has 1 entries for 2 joints"):
            articulation.apply_action(ArticulationAction(joint_velocities=[1.0]))


@pytest.mark.parametrize(('targets', 'message'), [
    ('inf', "ValueError: controller 'wheels': ArticulationAction joint_velocities for robot 'courier' in env 1: "
            "joint 'left_wheel_joint' has target inf"),
    ('short', "ValueError: controller 'wheels': ArticulationAction joint_velocities for robot 'courier' in env 1 has "
              "1 entries for 2 joints")])
def test_a_bad_target_from_a_controller_ends_its_slots_episode_naming_the_controller(hooks, targets, message):
    tasks = [hook_task(reward=False), hook_task(reward=False, targets=targets), hook_task(reward=False)]
    with Env(config(tasks, env_num=3)) as env:
        env.reset()
        obs, _, terminated, _, info = env.step([{'courier': {'wheels': [1.0]}}] * 3)
        assert terminated == [False, True, False] and info[1]['failed'].startswith(message)
        assert all(np.isfinite(env.runner.view.robots(0)['courier'].bound_world.data.ctrl[0]))
        assert HOOKS['apply_action', 0] == HOOKS['apply_action', 2] == 1


def test_nan32_targets_from_a_controller_keep_the_wheels_targets(hooks):
    with Env(config([hook_task(reward=False, targets='nan32')], env_num=1)) as env:
        env.reset()
        _, _, terminated, _, info = env.step([{'courier': {'wheels': [1.0]}}])
        data = env.runner.view.robots(0)['courier'].bound_world.data
        assert terminated == [False] and 'failed' not in info[0] and np.all(np.isfinite(data.ctrl[0]))
