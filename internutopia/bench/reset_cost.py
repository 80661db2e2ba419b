"""Cost of resetting one slot: same structure (state write) vs a structural change (world rebuild).

For each ``env_num``, all slots run Jetbot PointNav episodes on the flat ground; then slot 0 is
reset repeatedly with (a) an episode of the same structure (another start pose and goal) and (b)
an episode of a structure never seen before (a DynamicCube under a new name each time: the world
keeps the compiled models and batches of structures it has seen, so toggling one cube in and out
would compile only once; a new name makes every reset compile, carrying the other slots' state);
(c) all slots are reset at once with
same-structure episodes. Medians, in milliseconds and in units of one env step (all slots active,
every robot commanded), measured in the same run.

    python -m internutopia.bench.reset_cost [--env-num 16 64] [--repeats 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from internutopia.core.backend.mujoco.world import MujocoWorld
from internutopia.core.config import Config
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.objects import DynamicCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import PointNavTaskCfg


def episode(k: int, cube: str | None) -> PointNavTaskCfg:
    """Episode ``k``: a Jetbot heading for a goal, with a DynamicCube named ``cube`` (none if ``None``)."""
    objects = [DynamicCubeCfg(name=cube, position=(1.0, 1.0, 0.05))] if cube else []
    return PointNavTaskCfg(goal=(2.0, 0.0, 0.0), max_steps=10**9, robots=[JetbotRobotCfg(position=(0.01 * (k % 50), 0.0, 0.0))],
                           objects=objects)


def measure(env_num: int, repeats: int, steps: int) -> dict[str, float]:
    plan: list[str | None] = []  # per queued episode: the name of its cube (None: no cube)
    plain = [episode(k, None) for k in range(50)]  # built ahead: not timed
    new_structures = {f'cube_{i}': episode(i, f'cube_{i}') for i in range(repeats)}

    def queue():
        k = 0
        while True:
            cube = plan.pop(0) if plan else None
            yield new_structures[cube] if cube else plain[k % 50]
            k += 1

    env = Env(Config(env_num=env_num, env_offset_size=5.0, metrics_save_path='none', task_configs=[episode(0, None)]),
                episodes=queue())
    env.reset()
    action = [{'jetbot': {'move_by_speed': [0.2, 0.5]}}] * env_num
    for _ in range(20):
        env.step(action)
    t = time.perf_counter()
    for _ in range(steps):
        env.step(action)
    step_s = (time.perf_counter() - t) / steps

    def timed_resets(cubes: list[str | None]) -> float:
        times = []
        for cube in cubes:
            plan.append(cube)
            t = time.perf_counter()
            env.reset([0])
            times.append(time.perf_counter() - t)
            env.step(action)
        return float(np.median(times))

    world = env.runner.world
    assert isinstance(world, MujocoWorld)  # (the default backend: what this measures)
    compiles = world.compile_count
    same_s = timed_resets([None] * repeats)
    all_times = []
    for _ in range(max(3, repeats // 4)):
        t = time.perf_counter()
        env.reset()
        all_times.append(time.perf_counter() - t)
        env.step(action)
    all_s = float(np.median(all_times))
    assert world.compile_count == compiles, 'same-structure resets must not rebuild'
    change_s = timed_resets(list(new_structures))
    assert world.compile_count == compiles + repeats, 'each reset to a new structure compiles once'
    packs = len(world.packs)
    env.close()
    return {'env_num': env_num, 'packs': packs, 'step_ms': step_s * 1e3, 'same_ms': same_s * 1e3, 'same_steps': same_s / step_s,
            'change_ms': change_s * 1e3, 'change_steps': change_s / step_s, 'all_ms': all_s * 1e3, 'all_steps': all_s / step_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--env-num', type=int, nargs='+', default=[16, 64])
    parser.add_argument('--repeats', type=int, default=20)
    parser.add_argument('--steps', type=int, default=300)
    args = parser.parse_args()
    import_extensions()
    print('env_num (packs) | env step | reset 1 slot, same structure | reset 1 slot, structure change | '
          'reset all slots, same structure')
    for n in args.env_num:
        r = measure(n, args.repeats, args.steps)
        print(f"{r['env_num']:7d} ({r['packs']}) | {r['step_ms']:6.3f} ms | {r['same_ms']:8.3f} ms = {r['same_steps']:5.1f} steps"
              f" | {r['change_ms']:8.2f} ms = {r['change_steps']:6.1f} steps | {r['all_ms']:8.2f} ms = {r['all_steps']:6.1f} steps")


if __name__ == '__main__':
    main()
