"""Side-by-side throughput of one process against Ray runners (``docs/distributed.md``).

    python -m internutopia.bench.distributed [--steps 2000] [--rounds 5] [--env-num 8] [--procs 1 2]

Jetbot, ``FiniteStepTaskCfg`` episodes long enough never to end, every slot commanded with
``move_by_speed`` each step, or no command. With more than one runner, a commanded step costs two
round trips (all runners validate, then all step: a bad name must fail before any world moves);
an uncommanded one, or any step on one runner, costs one. Prints env-steps/s of each setup, its ratio to one process with the same number of slots and with ``env_num`` slots,
and the Ray path's per-step overhead (its step time minus one process's with the same ``env_num``).
All setups are open at once and measured in interleaved rounds; the best round counts (the machine
may be shared). Ray start-up is not counted.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from typing import Any

from internutopia.core.util.cpus import usable_cpus


def _tasks(count: int) -> list[Any]:
    # The extension's configs, by type name.
    from internutopia.core.config import RobotCfg, TaskCfg
    from internutopia.core.plugins import load_extensions

    load_extensions()
    task_cfg, robot_cfg = TaskCfg.config_class_for('FiniteStepTask'), RobotCfg.config_class_for('JetbotRobot')
    assert task_cfg is not None and robot_cfg is not None  # the extension registers both
    return [task_cfg(max_steps=10**9, robots=[robot_cfg()]) for _ in range(count)]


def _time_steps(env: Any, steps: int, command: bool) -> float:
    """Seconds per ``env.step``."""
    n = env.env_num
    action = [{'jetbot': {'move_by_speed': [0.3, 0.5]}}] * n if command else [None] * n
    start = time.perf_counter()
    for _ in range(steps):
        env.step(action)
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=2000, help='steps per setup and round')
    parser.add_argument('--rounds', type=int, default=5, help='interleaved rounds; the best round counts')
    parser.add_argument('--env-num', type=int, default=8, help='slots per world (per runner)')
    parser.add_argument('--procs', type=int, nargs='+', default=[1, 2])
    args = parser.parse_args(argv)

    import ray

    from internutopia.core.config import Config
    from internutopia.core.distribution import RayDistributionCfg
    from internutopia.core.vec_env import Env

    n = args.env_num
    # All setups stay open at once (only one steps at a time): reserve a logical CPU per runner.
    ray.init(num_cpus=max(usable_cpus(), sum(args.procs)), include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)
    setups: list[tuple[str, int, Any]] = []
    try:
        for slots in sorted({n * p for p in [1, *args.procs]}):
            setups.append((f'one process, env_num={slots}', slots,
                           Env(Config(env_num=slots, metrics_save_path='none', task_configs=_tasks(slots)))))
        for p in args.procs:
            cfg = Config(env_num=n, metrics_save_path='none', task_configs=_tasks(n * p))
            setups.append((f'Ray proc_num={p} x env_num={n}', n * p, Env(cfg.distribute(RayDistributionCfg(proc_num=p)))))
        best: dict[tuple[str, bool], float] = {}
        for _, _, env in setups:
            env.reset()
            _time_steps(env, 100, True)  # warm-up
        # Interleaved rounds, best round per setup: the machine may be shared.
        for _ in range(args.rounds):
            for name, _, env in setups:
                for command in (True, False):
                    t = _time_steps(env, args.steps, command)
                    best[name, command] = min(best.get((name, command), t), t)
    finally:
        for _, _, env in setups:
            env.close()
        ray.shutdown()

    base = {slots: best[name, True] for name, slots, _ in setups if name.startswith('one process')}
    base_idle = {slots: best[name, False] for name, slots, _ in setups if name.startswith('one process')}
    print(f'{os.cpu_count()} CPUs, jetbot, best of {args.rounds} interleaved rounds of {args.steps} steps, '
          'move_by_speed on every slot (cmd) or no command (no cmd)')
    print(f'{"setup":30s} {"slots":>5s} {"ms/step":>8s} {"env-steps/s":>12s} {"x 1 proc, same slots":>20s}'
          f' {f"x 1 proc, env_num={n}":>20s} {"no cmd ms/step":>15s} {"no cmd env-steps/s":>19s}')
    for name, slots, _ in setups:
        t, t_idle = best[name, True], best[name, False]
        print(f'{name:30s} {slots:5d} {t * 1e3:8.3f} {slots / t:12.0f} {base[slots] / t:20.2f}'
              f' {(slots / t) / (n / base[n]):20.2f} {t_idle * 1e3:15.3f} {slots / t_idle:19.0f}')
    for name, _slots, _ in setups:
        if name.startswith('Ray'):
            print(f'Ray path overhead per step, {name}: {(best[name, True] - base[n]) * 1e3:.3f} ms with commands, '
                  f'{(best[name, False] - base_idle[n]) * 1e3:.3f} ms without (vs one process, env_num={n})')


if __name__ == '__main__':
    main()
