"""Benchmark: env-steps per second of ``vec_env.Env.step``, as ratios measured side by side.

For each robot (H1 following a path, G1 walking with its policy, the jetbot) and each
``env_num``, one run measures, on the same machine and the same robot models:

- **ours**: ``vec_env.Env.step`` through the dict API of the contract and through the array API
  (``step_arrays``), with cameras off and on;
- **limit**: the physics alone: each round of ours replayed on raw ``mujoco.batch.Batch`` copies of
  the same models (same start state, same recorded controls) on every core, one ``Batch.step()``
  call per step and nothing else but writing that step's controls
  (:class:`internutopia.limit.PhysicsLimit`), in rounds alternating with ours in the same process
  (each keeps its best round);
- **async**: ``gymnasium.vector.AsyncVectorEnv`` over ``env_num`` single-robot MuJoCo gymnasium envs
  (``gym_env.Env``) doing the same control, one process each, as a Python loop over envs does;

and prints ``ours / limit`` and ``ours / async``, the cost of resetting one slot (same structure,
and a new structure) in units of one step, the start-up time to the first observation, and the
peak memory of the process running ours. Each "ours" case runs in a fresh process.

Run ``python -m internutopia.bench --help`` (or ``internutopia bench``). ``--json`` prints every
figure as one JSON object on the last line.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import sys
import time
from typing import Any, Optional

import numpy as np

from internutopia.limit import PhysicsLimit

ROBOTS = ('h1', 'g1', 'jetbot')
#: The user's example path for the humanoids; a shorter one for the small jetbot.
PATHS = {'h1': [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)], 'g1': [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)],
         'jetbot': [(0.5, 0.0, 0.0), (0.5, 0.5, 0.0), (1.0, 1.0, 0.0)]}


# ------------------------------------------------------------------------------------------------
# configs
def robot_config(robot: str, cameras: bool) -> Any:
    """The benchmark's robot config: base controllers, and a 320x240 camera when ``cameras``."""
    if robot == 'h1':
        from internutopia_extension.configs.robots import h1 as module
        cfg_class, camera = module.H1RobotCfg, getattr(module, 'h1_camera_cfg')
    elif robot == 'g1':
        from internutopia_extension.configs.robots import g1 as module
        cfg_class, camera = module.G1RobotCfg, getattr(module, 'g1_camera_cfg')
    elif robot == 'jetbot':
        from internutopia_extension.configs.robots import jetbot as module
        cfg_class, camera = module.JetbotRobotCfg, getattr(module, 'jetbot_camera_cfg')
    else:
        raise ValueError(f'unknown robot {robot!r}; choose from {list(ROBOTS)}')
    sensors = [camera.update(resolution=(320, 240), enable=True)] if cameras else []
    return cfg_class(controllers=[module.move_by_speed_cfg, module.move_along_path_cfg], sensors=sensors)


def bench_config(robot: str, env_num: int, cameras: bool, user_config: Optional[str] = None) -> Any:
    """A Config of ``env_num`` endless episodes of ``robot`` (or the user's config, resized)."""
    from internutopia.core.config import Config, SimConfig
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    if user_config:
        config = Config.from_yaml(user_config)
        return config.model_copy(update={'env_num': env_num, 'metrics_save_path': 'none'})
    task = SingleInferenceTaskCfg(robots=[robot_config(robot, cameras)])
    return Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=env_num, env_offset_size=10.0,
                  metrics_save_path='none', task_configs=[task] * env_num)


def dict_action(robot: str) -> Optional[dict]:
    return {robot: {'move_along_path': [PATHS[robot]]}} if robot in PATHS else None


# ------------------------------------------------------------------------------------------------
# ours (runs in a fresh process)
def _measure_ours(robot: str, env_num: int, cameras: bool, api: str, steps: int, user_config: Optional[str],
                  with_resets: bool) -> dict[str, Any]:
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    started = time.perf_counter()
    import_extensions()
    config = bench_config(robot, env_num, cameras, user_config)
    import_s = time.perf_counter() - started
    started = time.perf_counter()
    env = Env(config)
    env.reset()
    startup_s = time.perf_counter() - started
    action = dict_action(robot) if not user_config else None
    if api == 'dict':
        actions = [action] * env_num

        def step() -> None:
            env.step(actions)
    else:
        batched = {} if action is None else {robot: {'move_along_path': np.tile(np.asarray(PATHS[robot])[None], (env_num, 1, 1))}}

        def step() -> None:
            env.step_arrays(batched)
    for _ in range(max(10, steps // 10)):
        step()
    memory_mb = peak_memory_mb()  # before the limit's batches exist in this process
    limit = PhysicsLimit(env.runner.world)
    # Ours and the limit alternate in rounds, and each keeps its best round, so that the machine
    # slowing down or speeding up during the run does not tilt the ratio. The limit replays the
    # round ours just ran (same start state, same controls), so both simulate the same motion.
    rounds = 8  # short rounds: on a noisy machine some of them run undisturbed on both sides
    per_round = max(1, steps // rounds)
    ours_s, limit_s = [], []
    clock = time.perf_counter
    for _ in range(rounds):
        limit.start_round(per_round)
        elapsed = 0.0
        for k in range(per_round):
            began = clock()
            step()
            elapsed += clock() - began
            limit.record(k)  # the limit's bookkeeping, kept out of our time
        ours_s.append(elapsed / per_round)
        limit_s.append(limit.replay())
    del limit
    step_s = min(ours_s)
    out: dict[str, Any] = {'env_steps_per_s': env_num / step_s, 'limit_env_steps_per_s': env_num / min(limit_s),
                           'step_ms': step_s * 1e3, 'startup_s': startup_s, 'import_s': import_s,
                           'peak_memory_mb': memory_mb}
    if with_resets:
        out.update(_measure_resets(env, robot, env_num, cameras, user_config, step_s))
        # A structure change compiles a new one-slot model and makes its pack while the old pack still exists.
        out['peak_memory_with_rebuild_mb'] = peak_memory_mb()
    env.close()
    return out


def available_memory_mb() -> float:
    """Memory the kernel says is available for new processes, in MB."""
    try:
        with open('/proc/meminfo', encoding='utf-8') as stream:
            for line in stream:
                if line.startswith('MemAvailable:'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float('inf')


def peak_memory_mb() -> float:
    """Peak resident memory of this process in MB (``VmHWM``; ``ru_maxrss`` would include the
    parent's peak, which survives the fork and exec that start a worker)."""
    try:
        with open('/proc/self/status', encoding='utf-8') as stream:
            for line in stream:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure_resets(env: Any, robot: str, env_num: int, cameras: bool, user_config: Optional[str], step_s: float) -> dict:
    """Cost of resetting one slot: same structure (state write) and new structure (rebuild)."""
    import itertools

    from internutopia.core.episode_queue import EpisodeQueue

    runner = env.runner
    template = env.config.task_configs[0]
    resets = min(4, env_num)
    other = template.model_copy(update={'scene_position': (0.0, 0.0, 0.001)})
    # The queue is spent by now; feed the resets directly: `resets` of the same structure, then a new one.
    runner.queue = EpisodeQueue(itertools.chain([template] * resets, [other]))
    timings = []
    for slot in range(resets):
        began = time.perf_counter()
        env.reset([slot])
        timings.append(time.perf_counter() - began)
    same_s = float(np.median(timings))
    began = time.perf_counter()
    env.reset([0])  # 'other': a new structure
    new_s = time.perf_counter() - began
    return {'reset_same_structure_ms': same_s * 1e3, 'reset_same_structure_steps': same_s / step_s,
            'reset_new_structure_ms': new_s * 1e3, 'reset_new_structure_steps': new_s / step_s}


def _ours_worker(queue: Any, *args: Any) -> None:
    try:
        queue.put(_measure_ours(*args))
    except BaseException as exc:  # report, don't hang the parent
        queue.put({'error': f'{type(exc).__name__}: {exc}'})


def measure_ours(*args: Any) -> dict[str, Any]:
    """Run :func:`_measure_ours` in a fresh process (clean memory and start-up figures)."""
    context = multiprocessing.get_context('spawn')
    queue = context.Queue()
    process = context.Process(target=_ours_worker, args=(queue, *args))
    process.start()
    result = queue.get()
    process.join()
    if 'error' in result:
        raise RuntimeError(f'benchmark case {args[:4]} failed: {result["error"]}')
    return result


# ------------------------------------------------------------------------------------------------
# async
def _single_env(robot: str, cameras: bool, user_config: Optional[str]) -> Any:
    from internutopia.core.gym_env import Env as GymEnv
    from internutopia_extension import import_extensions

    import_extensions()
    config = bench_config(robot, 1, cameras, user_config)
    return GymEnv(config.model_copy(update={'task_configs': config.task_configs[:1]}))


class _SingleRobotEnv:
    """Picklable factory of one single-robot gymnasium env (for AsyncVectorEnv)."""

    def __init__(self, robot: str, cameras: bool, user_config: Optional[str]) -> None:
        self.args = (robot, cameras, user_config)

    def __call__(self) -> Any:
        import gymnasium as gym

        inner = _single_env(*self.args)

        class Wrapped(gym.Env):
            observation_space = gym.spaces.Box(-np.inf, np.inf, (3,))
            action_space = gym.spaces.Discrete(1)

            def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple:
                obs, _ = inner.reset()
                return obs['position'].astype(np.float32), {}

            def step(self, action: Any) -> tuple:
                command = dict_action(self_robot)
                obs, reward, terminated, truncated, info = inner.step(command[self_robot] if command else None)
                return obs['position'].astype(np.float32), reward, terminated, truncated, {}

        self_robot = self.args[0]
        return Wrapped()


def measure_async(robot: str, env_num: int, cameras: bool, steps: int, user_config: Optional[str]) -> float:
    """Env-steps/s of ``AsyncVectorEnv`` over ``env_num`` single-robot envs doing the same control."""
    import gymnasium as gym

    # A fork server starts each env from a clean process (no GL state inherited from this one).
    context = 'forkserver' if sys.platform.startswith('linux') else 'spawn'
    vector = gym.vector.AsyncVectorEnv([_SingleRobotEnv(robot, cameras, user_config)] * env_num, context=context)
    try:
        vector.reset()
        actions = np.zeros(env_num, dtype=np.int64)
        for _ in range(max(5, steps // 20)):
            vector.step(actions)
        count = max(20, steps // 4)
        began = time.perf_counter()
        for _ in range(count):
            vector.step(actions)
        return env_num * count / (time.perf_counter() - began)
    finally:
        vector.close()


# ------------------------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import mujoco

    cpu = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as stream:
            cpu = next(line.split(':', 1)[1].strip() for line in stream if line.startswith('model name'))
    except (OSError, StopIteration):
        pass
    return {'cpu': cpu, 'cores': os.cpu_count(), 'python': platform.python_version(), 'mujoco': mujoco.__version__,
            'platform': platform.platform()}


def run(robots: list[str], env_nums: list[int], cameras: list[bool], apis: list[str], steps: int, with_async: bool,
        user_config: Optional[str] = None, log: Any = print) -> dict[str, Any]:
    """Measure every case; return the figures (what ``--json`` prints)."""
    rows, resets = [], []
    for robot in robots:
        one_process_mb = {False: 0.0, True: 0.0}  # by camera setting, from the 1-slot case when measured
        for env_num in env_nums:
            for camera in cameras:
                alternative = None
                needed_mb = env_num * one_process_mb[camera]
                # Fork-server children share their imported modules, so a process costs somewhat
                # less than a fresh one; past 1.2x the free memory the run would be killed.
                if with_async and needed_mb > 1.2 * available_memory_mb():
                    log(f'{robot} x{env_num}: AsyncVectorEnv skipped: {env_num} processes need about {needed_mb:,.0f} MB, '
                        f'more than this machine has free')
                elif with_async:
                    try:
                        alternative = measure_async(robot, env_num, camera, steps, user_config)
                    except Exception as exc:  # e.g. env_num processes that do not fit in memory
                        log(f'{robot} x{env_num} cameras {"on" if camera else "off"}: AsyncVectorEnv failed '
                            f'({type(exc).__name__}: {exc}); no ratio')
                if alternative is not None:
                    log(f'{robot} x{env_num} cameras {"on" if camera else "off"}: AsyncVectorEnv {alternative:,.0f} env-steps/s')
                for api in apis:
                    with_resets = api == 'dict' and not camera
                    ours = measure_ours(robot, env_num, camera, api, steps, user_config, with_resets)
                    limit = ours['limit_env_steps_per_s']
                    if env_num == 1:
                        one_process_mb[camera] = ours['peak_memory_mb']
                    row = {'robot': robot if not user_config else os.path.basename(user_config), 'env_num': env_num,
                           'cameras': camera, 'api': api, 'env_steps_per_s': round(ours['env_steps_per_s'], 1),
                           'limit_env_steps_per_s': round(limit, 1), 'ratio_vs_limit': round(ours['env_steps_per_s'] / limit, 3),
                           'async_env_steps_per_s': None if alternative is None else round(alternative, 1),
                           'ratio_vs_async': None if alternative is None else round(ours['env_steps_per_s'] / alternative, 2),
                           'startup_s': round(ours['startup_s'], 3), 'peak_memory_mb': round(ours['peak_memory_mb'], 1)}
                    for key in ('reset_same_structure_ms', 'reset_same_structure_steps', 'reset_new_structure_ms',
                                'reset_new_structure_steps', 'peak_memory_with_rebuild_mb'):
                        if key in ours:
                            row[key] = round(ours[key], 3)
                    rows.append(row)
                    log(_format_row(row))
                    if with_resets:
                        resets.append({k: row[k] for k in ('robot', 'env_num') if k in row}
                                      | {k: row[k] for k in row if k.startswith('reset_') or k.endswith('rebuild_mb')})
    return {'machine': machine(), 'steps': steps, 'rows': rows, 'resets': resets,
            'startup_s': {f'{r["robot"]}x{r["env_num"]}': r['startup_s'] for r in rows if r['api'] == 'dict' and not r['cameras']},
            'peak_memory_mb': {f'{r["robot"]}x{r["env_num"]}': r['peak_memory_mb'] for r in rows if r['api'] == 'dict' and not r['cameras']}}


def _format_row(row: dict[str, Any]) -> str:
    text = (f'{row["robot"]:>7} x{row["env_num"]:<3} cameras {"on " if row["cameras"] else "off"} {row["api"]:>5}: '
            f'{row["env_steps_per_s"]:>10,.0f} env-steps/s  limit {row["limit_env_steps_per_s"]:,.0f}  '
            f'ours/limit {row["ratio_vs_limit"]:.2f}')
    if row['ratio_vs_async'] is not None:
        text += f'  ours/async {row["ratio_vs_async"]:.1f}'
    text += f'  start-up {row["startup_s"]:.2f} s  peak {row["peak_memory_mb"]:.0f} MB'
    if 'reset_same_structure_steps' in row:
        text += (f'  reset: same structure {row["reset_same_structure_steps"]:.1f} steps, '
                 f'new structure {row["reset_new_structure_ms"]:.0f} ms')
    return text


def _csv(kind: Any) -> Any:
    return lambda text: [kind(part) for part in text.split(',') if part]


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m internutopia.bench``: see ``--help``."""
    parser = argparse.ArgumentParser(prog='internutopia bench', description=__doc__.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--robots', type=_csv(str), default=list(ROBOTS), help='comma-separated: h1,g1,jetbot')
    parser.add_argument('--env-nums', type=_csv(int), default=[1, 4, 16, 64], help='comma-separated slot counts')
    parser.add_argument('--cameras', type=_csv(str), default=['off', 'on'], help='off, on, or off,on')
    parser.add_argument('--api', type=_csv(str), default=['dict', 'array'], help='dict, array, or dict,array')
    parser.add_argument('--steps', type=int, default=300, help='timed steps per case')
    parser.add_argument('--no-async', action='store_true', help='skip the AsyncVectorEnv comparison')
    parser.add_argument('--config', help='benchmark this YAML config instead of the built-in robots (no actions)')
    parser.add_argument('--json', action='store_true', help='print all figures as one JSON object on the last line')
    args = parser.parse_args(argv)
    for robot in args.robots:
        if robot not in ROBOTS:
            parser.error(f'unknown robot {robot!r}; choose from {", ".join(ROBOTS)}')
    if any(api not in ('dict', 'array') for api in args.api):
        parser.error('--api takes dict, array or dict,array')
    if any(c not in ('off', 'on') for c in args.cameras):
        parser.error('--cameras takes off, on or off,on')
    if any(n < 1 for n in args.env_nums):
        parser.error('--env-nums must be positive')
    os.environ.setdefault('MUJOCO_GL', 'egl')
    robots = [os.path.basename(args.config)] if args.config else args.robots
    figures = run(['config'] if args.config else robots, args.env_nums, [c == 'on' for c in args.cameras], args.api,
                  args.steps, not args.no_async, args.config, log=lambda text: print(text, flush=True))
    print(f'machine: {figures["machine"]}')
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == '__main__':
    sys.exit(main())
