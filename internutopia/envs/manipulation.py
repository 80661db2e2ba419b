"""Franka manipulation envs of the ``internutopia/Franka{Reach,Pick,PickPlace}-v0`` ids.

Each id samples episodes endlessly from the env's seeded generator: a Panda at the slot origin, a
5 cm cube (or, for reach, a translucent marker) at a random spot in front of it, and for
pick-and-place a goal at least 15 cm away. The action combines the arm and the gripper in one
``Box`` (the Gymnasium adapter's combined action): ``[x, y, z, qw, qx, qy, qz, grip]``: the tool
frame's env-local position (within the reachable box :data:`WORKSPACE`), its orientation (held
near pointing down by the bounds) and the gripper (``>= 0.5`` opens). The reward is the
:class:`~internutopia_extension.tasks.manipulation.ManipulationTask`'s shaped reward: named terms
in [0, 1] with the scales of :data:`REWARD_SCALES` (MuJoCo Playground's style); the step's terms
are the task's ``reward_terms``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Tool-frame positions an action may ask for (env-local m): low, high.
WORKSPACE = ((0.25, -0.45, 0.03), (0.75, 0.45, 0.5))
#: The tool pointing down (a half turn about x): the orientation the action bounds pin.
DOWN = (0.0, 1.0, 0.0, 0.0)
#: Largest change of each quaternion component from DOWN an action may ask for.
ORIENTATION_SLACK = 0.05
#: Reward scales per goal (terms: see ``ManipulationTaskCfg.reward_scales``).
REWARD_SCALES: dict[str, dict[str, float]] = {
    'reach': {'reach': 1.0, 'success': 1.0},
    'pick': {'reach': 0.5, 'grasp': 0.5, 'lift': 2.0, 'success': 5.0},
    'place': {'reach': 0.5, 'grasp': 0.5, 'lift': 1.0, 'place': 2.0, 'success': 10.0},
}
#: Observation parts per goal: the arm's joints, the tool frame, the gripper, the target (and goal).
OBS_KEYS: dict[str, list[str]] = {
    'reach': ['robot.joint_positions', 'robot.controllers.arm_ik_controller.eef_position', 'objects.target.position'],
    'pick': ['robot.joint_positions', 'robot.controllers.arm_ik_controller.eef_position',
             'robot.controllers.gripper_controller.gripper_pos', 'objects.cube.position', 'objects.cube.orientation'],
    'place': ['robot.joint_positions', 'robot.controllers.arm_ik_controller.eef_position',
              'robot.controllers.gripper_controller.gripper_pos', 'objects.cube.position', 'objects.cube.orientation',
              'task.goal_position'],
}
#: Episode limits per goal (s of simulated time).
TIME_LIMITS = {'reach': 2.0, 'pick': 6.0, 'place': 10.0}
PHYSICS_DT = 1 / 120
#: Physics steps per action (an action every 0.1 s).
ACTION_REPEAT = 12
#: The arm's physics substep in these ids: one physics step per env step (``None``). The 1 ms
#: substeps of ``FrankaRobotCfg``'s default keep heavy objects in the hand through fast jumps;
#: these ids hold a 125 g cube under a policy's 0.1 s actions, where one step holds it, and run
#: several times faster for learning.
PHYSICS_SUBSTEP = None


def manipulation_sampler(goal: str = 'reach', batch: int = 16, max_steps: int | None = None) -> Any:
    """An endless episode sampler ``f(rng) -> FreshEpisodes`` of ``ManipulationTaskCfg`` for ``goal``
    (``'reach'``, ``'pick'`` or ``'place'``), ``batch`` episodes per call, all of one family."""
    from internutopia.core.config.fresh_episodes import FreshEpisodes
    from internutopia.macros import gm
    from internutopia_extension.configs.objects import DynamicCubeCfg, VisualCubeCfg
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
    from internutopia_extension.configs.tasks import ManipulationTaskCfg

    if goal not in REWARD_SCALES:
        raise ValueError(f'unknown manipulation goal {goal!r}; valid goals: {sorted(REWARD_SCALES)}')
    steps = max_steps if max_steps is not None else int(round(TIME_LIMITS[goal] / PHYSICS_DT))

    def spot(rng: Any, height: float) -> tuple[float, float, float]:
        reach, bearing = rng.uniform(0.35, 0.65), rng.uniform(-0.6, 0.6)
        return (float(reach * np.cos(bearing)), float(reach * np.sin(bearing)), height)

    # Every episode is the goal's template (validated once, here) with its own draws put in: the
    # draws are numbers of the validated types, so a copy with them is what validating each
    # episode would give (tests/test_batched_resets.py checks it), at a small part of the cost.
    # Each episode has its own robot, controller and object configs; the rest is shared, never written.
    robot_template = FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg], physics_substep=PHYSICS_SUBSTEP)
    common = dict(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot_template], episode_idx=0,
                  max_steps=steps, goal=goal, reward_scales=REWARD_SCALES[goal])
    start = (0.5, 0.0, 0.025)
    if goal == 'reach':
        # Held to the time limit: success is being at the marker at the end (ending on success
        # would cut off the reward for staying there, and a policy would learn to hover short of it).
        marker = VisualCubeCfg(name='target', position=start, scale=(0.03, 0.03, 0.03), color=(0.1, 0.8, 0.2, 0.4))
        template = ManipulationTaskCfg(objects=[marker], target='target', goal_position=start, success_distance=0.04,
                                       end_on_success=False, **common)
    else:
        cube = DynamicCubeCfg(name='cube', position=start, scale=(0.05, 0.05, 0.05), color=(0.9, 0.2, 0.1))
        template = ManipulationTaskCfg(objects=[cube], target='cube', goal_position=start, **common)
    target_template = template.objects[0]
    controllers, scales = list(robot_template.controllers or ()), dict(template.reward_scales or {})
    family = object()  # the episodes of this sampler share types, files and structure

    def episode(rng: Any, index: int) -> Any:
        robot = robot_template.model_copy(update={'controllers': [c.model_copy() for c in controllers]})
        if goal == 'reach':
            target = spot(rng, float(rng.uniform(0.08, 0.4)))
            place = target
        else:
            target = spot(rng, 0.025)
            place = target
            while goal == 'place' and np.hypot(place[0] - target[0], place[1] - target[1]) < 0.15:
                place = spot(rng, 0.025)
        return template.model_copy(update={'robots': [robot], 'objects': [target_template.model_copy(update={'position': target})],
                                           'goal_position': place, 'episode_idx': index,
                                           'reward_scales': dict(scales)})

    def sample(rng: Any) -> FreshEpisodes:
        return FreshEpisodes([episode(rng, i) for i in range(batch)], family=family)

    sample.first = episode(np.random.default_rng(0), 0)  # type: ignore[attr-defined]
    return sample


def manipulation_action_space() -> Any:
    """The combined action's ``Box``: position in :data:`WORKSPACE`, orientation within
    :data:`ORIENTATION_SLACK` of :data:`DOWN` (a narrow range rather than a pinned one, so that
    action rescaling wrappers work), gripper."""
    from gymnasium import spaces

    low = np.array([*WORKSPACE[0], *(np.array(DOWN) - ORIENTATION_SLACK), 0.0], dtype=np.float32)
    high = np.array([*WORKSPACE[1], *(np.array(DOWN) + ORIENTATION_SLACK), 1.0], dtype=np.float32)
    return spaces.Box(low, high, dtype=np.float32)


def make_manipulation_vec(num_envs: int = 16, goal: str = 'reach', max_steps: int | None = None,
                          metrics_save_path: str = 'none', **kwargs: Any) -> Any:
    """A Franka :class:`~internutopia.core.gym_vector.VectorEnv` with sampled ``goal`` episodes
    (``'reach'``, ``'pick'``, ``'place'``) and the combined arm-and-gripper action; ``kwargs`` go
    to ``VectorEnv`` (``obs_keys``, ``obs_mode``, ``autoreset_mode``, ...)."""
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.gym_vector import VectorEnv

    sampler = manipulation_sampler(goal, max_steps=max_steps)
    config = Config(simulator=SimConfig(physics_dt=PHYSICS_DT, rendering_dt=PHYSICS_DT), env_num=num_envs,
                    env_offset_size=2.0, metrics_save_path=metrics_save_path, task_configs=[sampler.first])
    kwargs.setdefault('action_space', manipulation_action_space())
    kwargs.setdefault('obs_keys', OBS_KEYS[goal])
    return VectorEnv(config, episodes=sampler, robot='franka', controller=['arm_ik_controller', 'gripper_controller'],
                     action_repeat=ACTION_REPEAT, **kwargs)


def make_manipulation(render_mode: str | None = None, **kwargs: Any) -> Any:
    """The one-env :class:`~internutopia.core.gym_vector.FlatEnv` of :func:`make_manipulation_vec`."""
    from internutopia.core.gym_vector import FlatEnv

    return FlatEnv.of(lambda: make_manipulation_vec(num_envs=1, autoreset_mode='Disabled', render_mode=render_mode, **kwargs))


__all__ = ['REWARD_SCALES', 'WORKSPACE', 'make_manipulation', 'make_manipulation_vec', 'manipulation_action_space',
           'manipulation_sampler']
