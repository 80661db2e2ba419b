"""What recording a run as a LeRobot dataset costs: the same run with and without a ``Recorder``.

The workload: ``configs/franka_pick_place.yaml``'s episodes (cycled to ``--episodes``) on
``--env-num`` slots (16), each Panda with two 256x256 RGB cameras (front and wrist, rendered every
step), driven to the end of every episode by ``internutopia run``'s scripted pick-and-place policy,
at ``--physics-dt`` (1/30 s, InternManip's GenManip step, by default). Each run is a fresh process
timed from the first reset to the end of ``env.close()`` (which, when recording, waits for the last
episode's files), and reports its peak resident memory. Runs alternate, plain then recorded, for
``--pairs`` pairs, so each pair sees nearly the same machine; ``ratio`` is the median of the pairs'
recorded / plain wall times.

Each run has a time limit (``--timeout``, seconds; past it its processes are killed and the
benchmark fails saying so), and no run outlives the benchmark (:mod:`internutopia.bench.processes`):
a run leads a process group of its own (its dataset writer joins it) and dies with the benchmark,
and a ``SIGTERM``, ``SIGHUP`` or Ctrl-C to the benchmark kills the run's group and removes the
temporary dataset folder before it ends.

Run: ``python -m internutopia.bench.recording [--env-num 16] [--episodes 16] [--pairs 2] [--timeout 3600]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import numpy as np

from internutopia.bench import processes

__all__ = ['bench_config', 'run', 'run_once']

CONFIG = os.path.join(os.path.dirname(__file__), '..', '..', 'configs', 'franka_pick_place.yaml')
SIZE = 256
#: Default time limit of one run (seconds).
DEFAULT_TIMEOUT_S = 3600.0


class _Terminated(BaseException):
    """The benchmark got ``SIGTERM`` or ``SIGHUP``: unwinds it (its runs killed, its folder removed),
    then it ends by that signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: Any) -> None:
    processes.kill_tracked()  # (first: the exception may land in the middle of a run's own cleanup)
    raise _Terminated(signum)


def bench_config(env_num: int, episodes: int, physics_dt: float) -> Any:
    """The pick-and-place config with two 256x256 RGB cameras on every arm."""
    from internutopia.core.config import Config
    from internutopia_extension.configs.robots.franka import front_camera_256_cfg, wrist_camera_256_cfg

    base = Config.from_yaml(os.path.abspath(CONFIG))
    sensors = [front_camera_256_cfg.update(depth=False), wrist_camera_256_cfg.update(depth=False)]
    tasks = []
    for index in range(episodes):
        task = base.task_configs[index % len(base.task_configs)]
        tasks.append(task.update(episode_idx=index, robots=[task.robots[0].update(sensors=sensors)]))
    simulator = base.simulator.update(physics_dt=physics_dt, rendering_dt=physics_dt, headless=True)
    return base.update(simulator=simulator, env_num=env_num, metrics_save_path='none', task_configs=tasks)


def run_once(env_num: int, episodes: int, physics_dt: float, record: str | None) -> dict[str, Any]:
    """One run to the end of its episodes (recording into ``record`` unless ``None``)."""
    from internutopia.cli.policies import ScriptedPolicy
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    env = Env(bench_config(env_num, episodes, physics_dt))
    recorder = None
    if record is not None:
        from internutopia.recording import Recorder

        recorder = Recorder(record).attach(env)
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    obs, _ = env.reset()
    policy = ScriptedPolicy(env)
    policy.start(list(range(env.env_num)))
    steps = env_steps = succeeded = 0
    while not env.finished:
        env_steps += len(env.active_slots)
        obs, _, terminated, _, info = env.step(policy.actions(obs))
        steps += 1
        ended = [slot for slot in range(env.env_num) if terminated[slot] and info[slot] is not None]
        succeeded += sum(bool(info[slot]['metrics'].get('success')) for slot in ended)
        if ended:
            new_obs, _ = env.reset(ended)
            for slot, slot_obs in zip(ended, new_obs, strict=True):
                obs[slot] = slot_obs
            policy.start(ended)
    stepped = time.perf_counter() - began
    env.close()
    wall = time.perf_counter() - began
    out = {'record': record is not None, 'steps': steps, 'env_steps': env_steps, 'succeeded': succeeded,
           'wall_s': round(wall, 3), 'step_loop_s': round(stepped, 3),
           'peak_rss_mb': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           'load_1min': [round(load_before, 2), round(os.getloadavg()[0], 2)],  # at the start and the end
           # the dataset writer's process (joined by env.close()); 0 without recording
           'writer_peak_rss_mb': round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}
    if recorder is not None and record is not None:
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(record) for f in files)
        out.update(episodes_saved=recorder.episodes_saved, dataset_mb=round(size / 2 ** 20, 2))
    return out


def _child(env_num: int, episodes: int, physics_dt: float, record: str | None,
           timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """One run in a fresh process, which leads a process group of its own (its dataset writer joins
    it): the group is killed however this call ends (past ``timeout_s``, an error, a signal)."""
    command = [sys.executable, '-m', 'internutopia.bench.recording', '--child', '--env-num', str(env_num),
               '--episodes', str(episodes), '--physics-dt', repr(physics_dt)] + (['--record', record] if record else [])
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=processes.become_group_leader,  # (setpgid only: safe between fork and exec)
                             env={**os.environ, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')})
    processes.track_group(child.pid)  # (for the benchmark's exit; the signals are handled by run())
    try:
        try:
            out, err = child.communicate(timeout=timeout_s or None)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f'benchmark run ran past its time limit of {timeout_s:g} s; its processes were '
                               'killed') from None
    finally:
        _end(child)
    if child.returncode != 0:
        raise RuntimeError(f'benchmark run failed (exit status {child.returncode}):\n{err[-3000:]}')
    return json.loads(out.strip().splitlines()[-1])


def _end(child: subprocess.Popen) -> None:
    """Kill ``child``'s process group (whatever of it is left) and wait for the child."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if child.poll() is None:
        child.kill()
    try:
        child.communicate(timeout=10)  # (reaps it and closes its pipes)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass
    processes.untrack(child.pid)


def run(env_num: int = 16, episodes: int = 16, pairs: int = 2, physics_dt: float = 1 / 30,
        timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Alternating plain and recorded runs; their figures and the median recorded / plain ratio.

    Each run is killed past ``timeout_s`` seconds (``None`` or 0: no limit), which raises. On the
    main thread, a ``SIGTERM`` or ``SIGHUP`` meanwhile kills the running run, removes the temporary
    folder and ends the process by that signal (Ctrl-C does the same as ``KeyboardInterrupt``)."""
    handled = ('SIGTERM', 'SIGHUP') if threading.current_thread() is threading.main_thread() else ()
    previous = {name: signal.signal(getattr(signal, name), _terminate) for name in handled if hasattr(signal, name)}
    folder = tempfile.mkdtemp(prefix='internutopia-recording-bench-')
    try:
        rows = []
        for pair in range(pairs):
            plain = _child(env_num, episodes, physics_dt, None, timeout_s)
            recorded = _child(env_num, episodes, physics_dt, os.path.join(folder, f'pair{pair}'), timeout_s)
            rows.append({'plain': plain, 'recorded': recorded, 'ratio': round(recorded['wall_s'] / plain['wall_s'], 3)})
    except _Terminated as stop:
        shutil.rmtree(folder, ignore_errors=True)
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
        signal.signal(stop.signum, signal.SIG_DFL)  # end as the signal would have
        os.kill(os.getpid(), stop.signum)
        raise  # (only where the signal's default action does not end the process)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
    return {'case': 'recording', 'env_num': env_num, 'episodes': episodes, 'physics_dt': physics_dt,
            'cameras': f'2 x {SIZE}x{SIZE} RGB', 'ratio': round(float(np.median([r['ratio'] for r in rows])), 3),
            'pairs': rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--env-num', type=int, default=16)
    parser.add_argument('--episodes', type=int, default=16)
    parser.add_argument('--pairs', type=int, default=2)
    parser.add_argument('--physics-dt', type=float, default=1 / 30)
    parser.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT_S,
                        help='time limit of one run in seconds (0: none); past it the run is killed and the benchmark fails')
    parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--record', default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        processes.die_with_parent()  # (killed by the kernel, or its watchdog, the moment the benchmark dies)
        print(json.dumps(run_once(args.env_num, args.episodes, args.physics_dt, args.record)))
        return
    result = run(args.env_num, args.episodes, args.pairs, args.physics_dt, args.timeout)
    for index, pair in enumerate(result['pairs']):
        for side in ('plain', 'recorded'):
            row = pair[side]
            extra = (f"  writer peak RSS {row['writer_peak_rss_mb']:.0f} MB, saved {row['episodes_saved']} episodes, "
                     f"{row['dataset_mb']} MB" if side == 'recorded' else '')
            print(f"pair {index} {side:8s}: {row['wall_s']:7.2f} s  {row['env_steps'] / row['wall_s']:7.1f} env-steps/s  "
                  f"peak RSS {row['peak_rss_mb']:.0f} MB  ({row['succeeded']} of {result['episodes']} placed)  "
                  f"load {row['load_1min'][0]}-{row['load_1min'][1]}{extra}")
        print(f"pair {index} ratio recorded/plain: {pair['ratio']:.3f}")
    print(f"median ratio: {result['ratio']:.3f}")
    print(json.dumps(result))


if __name__ == '__main__':
    main()
