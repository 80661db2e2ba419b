"""Franka with InternManip-style cameras: ours against a process pool over plain-renderer envs.

The workload: ``env_num`` slots (16 by default), each a Panda holding an IK pose above a cube with
three 256x256 RGB-D cameras (front, side, wrist: ``internmanip_cameras``), every camera rendered
every physics step. One row compares, in env-steps per second (each env-step renders three RGB-D
frames):

- **ours**: ``vec_env.Env.step`` over all slots in one world (batched physics and rendering);
- **process pool**: ``gymnasium.vector.AsyncVectorEnv`` over ``env_num`` one-slot envs, each
  stepping the same robot with our ``gym_env.Env`` (its cameras off) and drawing the three cameras
  with a plain ``mujoco.Renderer`` at MuJoCo's defaults (RGB, then depth: six renders per step),
  returning the images through shared memory: what a user writes without us.

``ratio`` is ours / process pool. Run: ``python -m internutopia.bench.franka_cameras [--env-num 16]
[--steps 30]``; the case is also registered as ``franka_cameras`` (``--robots franka_cameras``).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from internutopia.bench.case import CASES, Case, endless_config, register_case
from internutopia.bench.pool import async_vector_env, time_steps

#: The IK target every step: above the cube, the tool pointing down.
TARGET = (0.5, 0.0, 0.2, 0.0, 1.0, 0.0, 0.0)
SIZE = 256


def franka_cameras_config(env_num: int, cameras: str = 'on', render: bool = True) -> Any:
    """``env_num`` endless slots of the Panda with the three cameras (rendered every step unless
    ``render`` is off: then only at an episode's start, for the plain-renderer envs)."""
    from internutopia_extension.configs.objects import DynamicCubeCfg
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg, internmanip_cameras
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    robot = FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg], sensors=list(internmanip_cameras))
    cube = DynamicCubeCfg(name='cube', position=(0.5, 0.0, 0.025), scale=(0.05, 0.05, 0.05), color=(0.9, 0.2, 0.1))
    config = endless_config(SingleInferenceTaskCfg(robots=[robot], objects=[cube]), env_num)
    if not render:
        config = config.update(simulator=config.simulator.update(rendering_interval=10 ** 9))
    return config


def _command() -> dict:
    return {'arm_ik_controller': [np.array(TARGET[:3]), np.array(TARGET[3:])], 'gripper_controller': ['open']}


def _dict_actions(env_num: int) -> list:
    return [{'franka': _command()}] * env_num


def _array_action(env_num: int) -> dict:
    return {'franka': {'arm_ik_controller': np.tile(np.array(TARGET), (env_num, 1)), 'gripper_controller': np.ones(env_num)}}


def measure_ours(env_num: int, steps: int) -> float:
    """Env-steps per second of ``vec_env.Env`` with the three cameras on every slot."""
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    with Env(franka_cameras_config(env_num)) as env:
        env.reset()
        actions = _dict_actions(env_num)
        for _ in range(3):
            env.step(actions)
        began = time.perf_counter()
        for _ in range(steps):
            obs = env.step(actions)[0]
        elapsed = time.perf_counter() - began
        assert obs[0]['franka']['sensors']['front_camera']['rgba'].shape == (SIZE, SIZE, 4)
    return env_num * steps / elapsed


class _PlainFrankaEnv:
    """Picklable factory of one plain-renderer env: our one-slot env steps the robot (cameras off),
    a ``mujoco.Renderer`` at MuJoCo's defaults draws the model's three cameras (RGB and depth)."""

    def __call__(self) -> Any:
        import gymnasium as gym
        import mujoco

        from internutopia.core.backend.mujoco.world import Pack as MujocoPack
        from internutopia.core.gym_env import Env as GymEnv
        from internutopia_extension import import_extensions

        import_extensions()
        inner = GymEnv(franka_cameras_config(1, render=False))
        command = _command()
        box = gym.spaces.Box(0, 255, (SIZE, SIZE, 3), np.uint8)
        depth = gym.spaces.Box(0.0, np.inf, (SIZE, SIZE), np.float32)
        names = ('front_camera', 'side_camera', 'wrist_camera')
        holder: list = []

        def observe() -> dict:
            pack = inner._vec_env.runner.world.pack(0)
            assert isinstance(pack, MujocoPack)  # (the plain renderer draws a MuJoCo model)
            if not holder:
                model = pack.drawn_model
                cams = [i for i in range(model.ncam) if any(model.camera(i).name.endswith(n) for n in names)]
                holder.extend([mujoco.Renderer(model, SIZE, SIZE), cams])
            renderer, cams = holder
            data = pack.drawn_data(0)
            out = {}
            for name, cam in zip(names, cams, strict=True):
                renderer.update_scene(data, camera=cam)
                out[name] = renderer.render()
                renderer.enable_depth_rendering()
                out[name + '_depth'] = renderer.render()
                renderer.disable_depth_rendering()
            return out

        class PlainEnv(gym.Env):
            observation_space = gym.spaces.Dict({**{n: box for n in names}, **{n + '_depth': depth for n in names}})
            action_space = gym.spaces.Discrete(1)

            def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
                inner.reset()
                return observe(), {}

            def step(self, action: Any) -> tuple:
                _, reward, terminated, truncated, _ = inner.step(command)
                return observe(), reward, terminated, truncated, {}

        return PlainEnv()


def measure_process_pool(env_num: int, steps: int) -> float:
    """Env-steps per second of ``AsyncVectorEnv`` over ``env_num`` plain-renderer envs (workers
    that die with the benchmark: :mod:`internutopia.bench.pool`)."""
    vector = async_vector_env([_PlainFrankaEnv()] * env_num)
    try:
        return time_steps(vector, steps)
    finally:
        vector.close()


def run(env_num: int = 16, steps: int = 30) -> dict[str, Any]:
    """One row: ours, the process pool, and their ratio."""
    ours = measure_ours(env_num, steps)
    pool = measure_process_pool(env_num, max(5, steps // 3))
    return {'case': 'franka_cameras', 'env_num': env_num, 'cameras': '3 x 256x256 RGB-D', 'ours_env_steps_per_s': round(ours, 2),
            'process_pool_env_steps_per_s': round(pool, 2), 'ratio': round(ours / pool, 2)}


if 'franka_cameras' not in CASES:  # (run as a script, the module is imported twice: by the registry, then as __main__)
    register_case(Case('franka_cameras', 'Franka Panda holding an IK pose with three 256x256 RGB-D cameras (InternManip-style)',
                       franka_cameras_config, _dict_actions, _array_action, robot='franka', default=False))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--env-num', type=int, default=16)
    parser.add_argument('--steps', type=int, default=30)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.env_num, args.steps)))


if __name__ == '__main__':
    main()


__all__ = ['franka_cameras_config', 'measure_ours', 'measure_process_pool', 'run']
