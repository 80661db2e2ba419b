"""How H1's walking policy carries the hands: H1 and H1 with hands under the same commands, side by side.

Run: ``MUJOCO_GL=egl python -m internutopia_extension.robots.h1_with_hand_measure [--slots 6]``
(about a minute on two cores). For each command and robot, ``slots`` slots walk on flat ground at
``physics_dt = 1/200``; slot ``i`` starts its 3 s command ``13 i`` steps later than slot 0 (another
moment of its standing sway), and its speed is measured over the last 2 s of the command (after
the command's ramp), in the heading frame it had then. Prints one line per command and robot:
forward, lateral and yaw speeds (mean and spread over slots), falls (pelvis below 0.6 m) and
the lowest pelvis height. ``docs/robots.md`` (H1 with hands) has a run's figures.
"""

from __future__ import annotations

import argparse

import numpy as np

#: ``(forward, lateral, yaw rate)`` commands measured.
COMMANDS = [(1.0, 0.0, 0.0), (0.5, 0.0, 0.0), (0.0, 0.5, 0.0), (0.0, -0.5, 0.0), (0.0, 0.0, 1.0), (-0.5, 0.0, 0.0), (0.0, 0.0, 0.0)]
RATE = 200  # physics steps per second
STEPS, RAMP, STAGGER, STAND = 600, 200, 13, 200


def measure(robot_cfg, command, slots: int) -> dict[str, np.ndarray]:
    """Speeds ``(slots,)`` of ``robot_cfg`` (named ``'r'``, with ``move_by_speed``) under ``command``."""
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.util.math import quat_to_yaw
    from internutopia.core.vec_env import Env
    from internutopia.macros import gm
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    task = SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[robot_cfg])
    env = Env(Config(simulator=SimConfig(physics_dt=1 / RATE, rendering_dt=1 / RATE), env_num=slots, env_offset_size=10,
                     metrics_save_path='none', task_configs=[task] * slots))
    starts = STAND + STAGGER * np.arange(slots)
    begin, end = np.zeros((slots, 3)), np.zeros((slots, 3))
    yaws: list[list[float]] = [[] for _ in range(slots)]
    lowest = np.full(slots, np.inf)
    try:
        env.reset()
        for step in range(int(starts.max()) + STEPS + 1):
            obs, *_ = env.step([{'r': {'move_by_speed': command}} if starts[k] <= step < starts[k] + STEPS else {} for k in range(slots)])
            for k in range(slots):
                robot = obs[k]['r']
                if step == starts[k] + RAMP:
                    begin[k] = robot['position']
                if starts[k] + RAMP <= step < starts[k] + STEPS:
                    yaws[k].append(float(quat_to_yaw(np.asarray(robot['orientation']))))
                    lowest[k] = min(lowest[k], float(robot['position'][2]))
                if step == starts[k] + STEPS - 1:
                    end[k] = robot['position']
    finally:
        env.close()
    seconds = (STEPS - RAMP - 1) / RATE
    heading = np.array([y[0] for y in yaws])
    moved = end - begin
    cos, sin = np.cos(heading), np.sin(heading)
    return {'forward': (cos * moved[:, 0] + sin * moved[:, 1]) / seconds,
            'lateral': (-sin * moved[:, 0] + cos * moved[:, 1]) / seconds,
            'yaw_rate': np.array([np.unwrap(y)[-1] - y[0] for y in yaws]) / seconds,
            'lowest': lowest}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--slots', type=int, default=6)
    args = parser.parse_args(argv)
    from internutopia_extension import import_extensions
    from internutopia_extension.configs.robots import h1, h1_with_hand

    import_extensions()
    robots = [('h1', h1.H1RobotCfg(name='r', controllers=[h1.move_by_speed_cfg])),
              ('h1_with_hand', h1_with_hand.H1WithHandRobotCfg(name='r', controllers=[h1_with_hand.move_by_speed_cfg]))]
    for command in COMMANDS:
        for name, cfg in robots:
            m = measure(cfg, command, args.slots)
            text = ' '.join(f'{key} {m[key].mean():+.3f}+-{m[key].std():.3f}' for key in ('forward', 'lateral', 'yaw_rate'))
            print(f'{name:13s} command {command}: {text} falls {int((m["lowest"] < 0.6).sum())}/{args.slots} '
                  f'lowest pelvis {m["lowest"].min():.2f} m', flush=True)


if __name__ == '__main__':
    main()
