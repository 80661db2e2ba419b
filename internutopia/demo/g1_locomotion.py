"""A Unitree G1 walks with its trained policy through a speed program: stand, forward, turn left,
side-step right, stop (needs ``holosoma-inference``: ``pip install --no-deps holosoma-inference``).

Run: ``MUJOCO_GL=egl python -m internutopia.demo.g1_locomotion [--steps N]`` (headless it stops after
the program, 2400 env steps; ``move_by_speed`` takes ``(forward m/s, lateral m/s, yaw rad/s)``).
InternUtopia's demo drives the G1 from the keyboard; this one runs a program so it shows the same
thing on a server. Prints the position and heading at the end of each phase.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.util import has_display
from internutopia.core.util.math import quat_to_yaw
from internutopia.demo.launch import demo_arguments, demo_steps, require_extra, step_budget
from internutopia.macros import gm
from internutopia_extension import import_extensions

#: ``(name, (forward, lateral, yaw rate), share of the run)``.
PROGRAM = [('stand', (0.0, 0.0, 0.0), 0.1), ('forward', (0.5, 0.0, 0.0), 0.3), ('turn left', (0.0, 0.0, 0.5), 0.2),
           ('side-step right', (0.0, -0.3, 0.0), 0.2), ('stop', (0.0, 0.0, 0.0), 0.2)]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the program; return ``{'steps', 'phases': [{'name', 'position', 'yaw'}], 'height'}``."""
    args = demo_arguments(__doc__, default_steps=2400).parse_args(argv)
    budget = step_budget(args)
    require_extra('robot', 'G1Robot')
    from internutopia_extension.configs.robots.g1 import G1RobotCfg, move_by_speed_cfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    config = Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, headless=not has_display()),
                    metrics_save_path='none',
                    task_configs=[SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                                         robots=[G1RobotCfg(position=(0.0, 0.0, 0.8),
                                                                            controllers=[move_by_speed_cfg])])])
    import_extensions()
    total = budget or 2400
    ends = np.cumsum([round(share * total) for _, _, share in PROGRAM])
    ends[-1] = total
    env = Env(config)
    obs, _ = env.reset()
    phases: list[dict[str, Any]] = []
    step, phase = 0, 0
    try:
        for step in demo_steps(budget):
            while phase < len(PROGRAM) - 1 and step > ends[phase]:
                phase += 1
            name, speed, _ = PROGRAM[phase]
            obs, _, _, _, _ = env.step(action={move_by_speed_cfg.name: speed})
            if step == ends[phase] or step % total == 0:
                yaw = float(quat_to_yaw(np.asarray(obs['orientation'])))
                phases.append({'name': name, 'position': np.asarray(obs['position']).tolist(), 'yaw': yaw})
                print(f'step {step}: after {name} {speed}: position {np.round(obs["position"][:2], 2).tolist()}, '
                      f'heading {np.degrees(yaw):.0f} deg, pelvis {obs["position"][2]:.2f} m high', flush=True)
            if not env.simulation_app.is_running():
                break
    finally:
        env.close()
    height = float(obs['position'][2])
    print(f'{step} steps; the G1 {"stayed up" if height > 0.5 else "fell"} (pelvis {height:.2f} m)')
    return {'steps': step, 'phases': phases, 'height': height}


if __name__ == '__main__':
    main()
