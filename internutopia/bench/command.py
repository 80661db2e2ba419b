"""The benchmark's command line and its driver over cases (``python -m internutopia.bench``)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from internutopia.bench import cameras as camera_rows
from internutopia.bench import options, processes
from internutopia.bench.baseline import EMPTY, AsyncBaseline
from internutopia.bench.cases import CAMERAS, CASES, get_case
from internutopia.bench.fresh import DEFAULT_TIMEOUT_S
from internutopia.bench.memory import DEFAULT_SHARE
from internutopia.bench.ours import measure_ours
from internutopia.bench.report import combine_runs, format_row, machine, markdown_table
from internutopia.core.backend.mujoco.render.gl import default_to_egl

__all__ = ['main', 'run']

APIS = options.APIS
#: What a run without options measures: short enough for a first try (3.5-4.5 minutes on a busy 2-core
#: machine, less on a quiet one: docs/performance.md, "Running it").
QUICK: dict[str, Any] = {'robots': ['h1'], 'env_nums': [1, 16, 64], 'cameras': ['off'], 'async_max_workers': 16}
#: ``--full``: the complete table of ``docs/performance.md``, then the camera rows.
FULL: dict[str, Any] = {'robots': lambda: [n for n, c in CASES.items() if c.default], 'env_nums': [1, 4, 16, 64],
                        'cameras': ['off', 'on'], 'async_max_workers': None}


def camera_rows_wanted(cameras: list[str], no_render: bool, user_config: str | None) -> bool:
    """Whether the camera rows run: some camera setting renders (not only ``off``), they were not
    switched off (``--no-render``), and no user config replaces the cases."""
    return not (no_render or user_config) and any(camera != 'off' for camera in cameras)


def run(robots: list[str], env_nums: list[int], cameras: list[str], apis: list[str], steps: int, with_async: bool,
        user_config: str | None = None, log: Callable[[str], Any] = print, repeat: int = 1, chunk: int = 20,
        camera_steps: int | None = None, render_robots: list[str] | None = None,
        render_cameras: list[str] | None = None, render_steps: int = 24,
        render_threads: int | None = None, memory_share: float = DEFAULT_SHARE, async_max_workers: int | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S, backend: str | None = None, device: str | None = None,
        gym_ids: list[str] | None = None) -> dict[str, Any]:
    """Measure every case; return the figures (what ``--json`` prints).

    Args:
        robots: case names (keys of :data:`~internutopia.bench.cases.CASES`); ignored with ``user_config``.
        env_nums: slot counts.
        cameras: camera settings (keys of :data:`~internutopia.bench.cases.CAMERAS`).
        apis: ``'dict'`` and/or ``'array'``.
        steps: timed steps of ours per run, in chunks of ``chunk`` steps (one pair each).
        with_async: also measure ``AsyncVectorEnv`` (once per robot, ``env_num`` and camera setting).
        user_config: a YAML config to run instead of the cases.
        log: where progress lines go.
        repeat: runs per case with cameras off, each in a fresh process (rows with cameras run once).
        chunk: steps per timed chunk.
        camera_steps: timed steps with cameras on (rendering makes those steps slow); ``steps``
            when ``None``.
        render_robots: robots of the camera rows (:mod:`internutopia.bench.cameras`); none when empty.
        render_cameras: camera settings of the camera rows (keys of ``cameras.SETTINGS``).
        render_steps: timed steps per camera case (fewer when many slots render).
        render_threads: ours' ``rendering_threads`` in the camera rows (``None``: the default).
        memory_share: the share of the free memory a baseline's process pool may take
            (:mod:`internutopia.bench.memory`); pools that need more run fewer workers or are skipped.
        async_max_workers: at most this many workers per pool (``None``: memory decides).
        timeout_s: time limit of each measurement (its processes are killed past it).
        backend, device: the physics backend and device of ours' rows (``None``: the cases' own, MuJoCo).
        gym_ids: Gymnasium ids whose vector step is measured against the limit at each of
            ``env_nums`` (:mod:`internutopia.bench.gym_step`), after the cases; ``gym_rows`` in the figures.
    """
    rows: list[dict[str, Any]] = []
    resets: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    names = ['config'] if user_config else robots
    first_machine = machine()
    baseline = AsyncBaseline(log, share=memory_share, max_workers=async_max_workers, timeout_s=timeout_s)
    for robot in names:
        for env_num in env_nums:
            for camera in cameras:
                case_steps = steps if camera == 'off' or camera_steps is None else camera_steps
                label = f'{robot} x{env_num} cameras {camera}'
                pool = baseline.measure(robot, env_num, camera, case_steps, user_config) if with_async else dict(EMPTY)
                for api in apis:
                    if api not in get_case(robot, user_config).apis:
                        log(f'{label}: the {api} API does not apply to this case; skipped')
                        continue
                    with_resets = api == 'dict' and camera == 'off'
                    runs = []
                    # Rows with cameras are bound by rendering (ours/limit near 0): one run says it.
                    case_repeat = repeat if camera == 'off' else 1
                    for index in range(case_repeat):
                        try:
                            result = measure_ours(robot, env_num, camera, api, case_steps, chunk, user_config, with_resets,
                                                  backend=backend, device=device, timeout_s=timeout_s)
                        except RuntimeError as exc:  # a run that fails or times out costs its row only
                            log(f'{label} {api}: failed ({str(exc).splitlines()[0]}); row left out')
                            failures.append({'robot': robot, 'env_num': env_num, 'cameras': camera, 'api': api,
                                             'error': str(exc).splitlines()[0]})
                            break
                        runs.append(result)
                        if case_repeat > 1:
                            log(f'{label} {api} run {index + 1}/{case_repeat}: ours/limit {result["ratio"]:.3f} '
                                f'(IQR {result["ratio_q1"]:.3f}-{result["ratio_q3"]:.3f}, {result["pairs"]} pairs '
                                f'of {result["chunk"]} steps, {result["clean_pairs"]} clean)')
                    if not runs:
                        continue
                    name = os.path.basename(user_config) if user_config else robot
                    row = combine_runs(name, env_num, camera, api, runs, pool['async_env_steps_per_s'], pool)
                    rows.append(row)
                    log(format_row(row))
                    if with_resets:
                        resets.append({'robot': name, 'env_num': env_num}
                                      | {k: row[k] for k in row if k.startswith('reset_') or k.endswith('rebuild_mb')})
    cameras_out: list[dict[str, Any]] = []
    quality: list[dict[str, Any]] = []
    if render_robots and render_cameras:
        cameras_out = camera_rows.run_cameras(render_robots, env_nums, render_cameras, render_steps, chunk=4,
                                              with_async=with_async, log=log, quality_rows=quality,
                                              threads=render_threads)
    gym_rows = []
    if gym_ids:  # (imported here: python -m internutopia.bench.gym_step runs that module as __main__)
        from internutopia.bench.gym_step import run_gym

        gym_rows = run_gym(gym_ids, env_nums, log=log, timeout_s=timeout_s)
    plain = [r for r in rows if r['api'] == rows[0]['api'] and r['cameras'] == 'off'] if rows else []
    return {'gym_rows': gym_rows, 'camera_rows': cameras_out, 'lod_quality': quality, 'machine': first_machine, 'load_at_end': machine()['load'], 'steps': steps, 'chunk': chunk,
            'repeat': repeat, 'rows': rows, 'resets': resets, 'failures': failures,
            'startup_s': {f'{r["robot"]}x{r["env_num"]}': r['startup_s'] for r in plain},
            'peak_memory_mb': {f'{r["robot"]}x{r["env_num"]}': r['peak_memory_mb'] for r in plain}}


def _checked_config(path: str, overrides: list[str]) -> tuple[str, int] | None:
    """``path`` checked as ``internutopia validate`` checks it (problems printed: ``None``), and its
    ``env_num``; with ``overrides``, a copy with them applied and its files resolved, in a
    temporary folder under the same file name (removed at exit)."""
    import atexit
    import shutil
    import tempfile

    from internutopia.cli.config_file import ConfigError, load_config

    try:
        config = load_config(path, overrides=overrides)
    except ConfigError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return None
    if not overrides:
        return path, config.env_num
    folder = tempfile.mkdtemp(prefix='internutopia-bench-')
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    copy = os.path.join(folder, os.path.basename(path))
    config.to_yaml(copy)
    return copy, config.env_num


def _csv(kind: Any) -> Any:
    """An argparse type: a comma-separated list of ``kind`` (its error names the entry and the type wanted)."""
    def parse(text: str) -> list[Any]:
        try:
            return [kind(part) for part in text.split(',') if part]
        except ValueError:
            raise argparse.ArgumentTypeError(f'{text!r} is not a comma-separated list of {kind.__name__} values') from None
    return parse


def _parser() -> argparse.ArgumentParser:
    from internutopia import bench
    from internutopia.bench.gym_step import DEFAULT_IDS

    cases = '\n'.join(f'  {name:<8} {case.description}' for name, case in CASES.items())
    camera_minutes = camera_rows.estimate_seconds(FULL['env_nums'], list(camera_rows.SETTINGS), 24, True) / 60
    length = ('run length on 2 cores: the default run (H1 at 1, 16 and 64 slots, cameras off, both '
              'APIs, process pools of up to 16 workers as memory allows) 3.5-4.5 minutes on a busy machine (205-268 s measured '
              'at load 4-13), less on a quiet one; --full (every default case at 1, 4, 16 and 64 '
              f'slots, cameras off and on, then the camera rows) about {9 + camera_minutes:.0f} minutes '
              '(--no-render skips the camera rows, --no-async the process pools; docs/performance.md).')
    parser = argparse.ArgumentParser(prog='internutopia bench', description=bench.__doc__.split('\n\n')[0],
                                     epilog=f'cases (--robots):\n{cases}\n\n{length}\n\n'
                                            f'The method: python -m pydoc internutopia.bench (camera rows: '
                                            f'python -m pydoc internutopia.bench.cameras)',
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--full', action='store_true',
                        help="the docs' complete table: every default case, env_num 1,4,16,64, cameras off,on, then the "
                             'camera rows (options given beside it still apply)')
    parser.add_argument('--robots', type=_csv(str), default=None,
                        help=f'comma-separated cases: {",".join(CASES)} (default: {",".join(QUICK["robots"])}; with --full '
                             'all default cases)')
    parser.add_argument('--env-nums', type=_csv(int), default=None,
                        help=f'comma-separated slot counts (default {",".join(map(str, QUICK["env_nums"]))}; with --full '
                             f'{",".join(map(str, FULL["env_nums"]))}; with --config, the config\'s env_num, after --set)')
    parser.add_argument('--cameras', type=_csv(str), default=None,
                        help=f'comma-separated camera settings: {",".join(CAMERAS)} (default off; with --full off,on). '
                             'With only off, no row renders: the camera rows are skipped too')
    parser.add_argument('--api', type=_csv(str), default=list(APIS), help='dict, array, or dict,array (default dict,array)')
    parser.add_argument('--steps', type=int, default=600, help='timed steps of ours per run (default 600)')
    parser.add_argument('--chunk', type=int, default=20, help='steps per timed chunk; one ours/limit pair each (default 20)')
    parser.add_argument('--camera-steps', type=int, default=60,
                        help='timed steps per run with cameras on, where rendering makes steps slow (default 60)')
    parser.add_argument('--repeat', type=int, default=1, help='runs per case with cameras off, each in a fresh process; rows with cameras on, '
                        'bound by rendering, run once (default 1)')
    parser.add_argument('--no-async', action='store_true', help='skip the AsyncVectorEnv comparison')
    parser.add_argument('--memory-share', type=float, default=DEFAULT_SHARE,
                        help='share of the free memory (MemAvailable, or what the cgroup limit leaves) an AsyncVectorEnv '
                             'pool may take; a pool that needs more runs fewer workers (at least one per core) or is '
                             f'skipped, and the row says so (default {DEFAULT_SHARE})')
    parser.add_argument('--async-max-workers', type=int, default=None,
                        help=f'at most this many AsyncVectorEnv workers per pool (default {QUICK["async_max_workers"]}: more '
                             'workers than that on a few cores add start-up time and memory, not throughput; with --full, '
                             'as many as env_num and memory allow)')
    parser.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT_S,
                        help=f'time limit of one measurement in seconds; past it its processes are killed and the row '
                             f'is left out (default {DEFAULT_TIMEOUT_S:.0f}; inf: no limit)')
    parser.add_argument('--render-cameras', type=_csv(str), default=list(camera_rows.SETTINGS),
                        help='camera rows: comma-separated settings ' + ','.join(camera_rows.SETTINGS) + ' (default: all)')
    parser.add_argument('--render-robots', type=_csv(str), default=['h1'],
                        help='robots of the camera rows: ' + ','.join(camera_rows.ROBOTS) + ' (default h1)')
    parser.add_argument('--render-steps', type=int, default=24,
                        help='timed steps per camera case, fewer when many slots render (default 24)')
    parser.add_argument('--render-threads', type=int, default=None,
                        help="ours' SimConfig.rendering_threads in the camera rows (default: one per core)")
    parser.add_argument('--no-render', action='store_true', help='skip the camera rows')
    parser.add_argument('--config', help='benchmark this YAML config instead of the built-in cases (no actions)')
    parser.add_argument('--backend', choices=['mujoco', 'warp'], default=None,
                        help="physics backend of ours' rows (default: mujoco); warp rows are timed against raw mujoco_warp stepping")
    parser.add_argument('--device', default=None, help="device of --backend warp: cpu or cuda:N (default: the first GPU, else cpu)")
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', dest='overrides',
                        help='with --config: change a value of the config (a dotted path into the YAML, the value read as '
                             'YAML), as "internutopia run --set" does; repeat for several')
    parser.add_argument('--gym', nargs='?', const=','.join(DEFAULT_IDS), default=None, type=str, metavar='IDS',
                        help='also measure the Gymnasium vector step of these comma-separated ids (default: '
                             f'{",".join(DEFAULT_IDS)}) at each --env-nums count against the physics limit, with '
                             'random actions (internutopia.bench.gym_step); --robots "" leaves only these rows')
    parser.add_argument('--markdown', action='store_true', help="print the rows as docs/performance.md's table")
    parser.add_argument('--json', action='store_true', help='print all figures as one JSON object on the last line')
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m internutopia.bench``: see ``--help``."""
    parser = _parser()
    args = parser.parse_args(argv)
    preset = FULL if args.full else QUICK
    env_nums_given = args.env_nums is not None
    for option in ('robots', 'env_nums', 'cameras', 'async_max_workers'):
        if getattr(args, option) is None:
            value = preset[option]
            value = value() if callable(value) else value
            setattr(args, option, list(value) if isinstance(value, list) else value)
    # (an empty list measures nothing, a repeated entry the same rows twice: both refused, naming the option)
    options.checked_list(parser, '--robots', args.robots, choices=CASES, what='robot',
                         allow_empty=bool(args.gym or args.config))  # (--robots "" with --gym: only those rows)
    if args.gym:
        import gymnasium

        import internutopia.envs  # noqa: F401  (registers the ids)

        unknown = [i for i in args.gym.split(',') if i and i not in gymnasium.registry]
        if unknown:
            parser.error(f'unknown Gymnasium ids {unknown}; internutopia ids: '
                         f'{sorted(k for k in gymnasium.registry if k.startswith("internutopia/"))}')
        options.checked_list(parser, '--gym', options.text_list(args.gym), what='id')
    if any(api not in APIS for api in args.api):
        parser.error('--api takes dict, array or dict,array')
    options.checked_list(parser, '--api', args.api, choices=APIS, what='API')
    for camera in args.cameras:
        if camera not in CAMERAS:
            parser.error(f'unknown camera setting {camera!r}; --cameras takes {", ".join(CAMERAS)}')
    options.checked_list(parser, '--cameras', args.cameras, choices=CAMERAS, what='camera setting')
    for name in args.render_cameras:
        if name not in camera_rows.SETTINGS:
            parser.error(f'unknown camera row setting {name!r}; --render-cameras takes {", ".join(camera_rows.SETTINGS)}')
    options.checked_list(parser, '--render-cameras', args.render_cameras, choices=camera_rows.SETTINGS,
                         what='camera row setting', allow_empty=True)
    for robot in args.render_robots:
        if robot not in camera_rows.ROBOTS:
            parser.error(f'no camera rows for robot {robot!r}; --render-robots takes {", ".join(camera_rows.ROBOTS)}')
    options.checked_list(parser, '--render-robots', args.render_robots, choices=camera_rows.ROBOTS, what='robot',
                         allow_empty=True)  # (none: no camera rows, as --no-render)
    if any(n < 1 for n in args.env_nums):
        parser.error('--env-nums must be positive')
    options.checked_list(parser, '--env-nums', args.env_nums, what='slot count')
    if not 0 < args.memory_share <= 1:
        parser.error('--memory-share must be in (0, 1]')
    if args.async_max_workers is not None and args.async_max_workers < 1:
        parser.error('--async-max-workers must be at least 1')
    options.positive_seconds(parser, '--timeout', args.timeout)
    if args.render_threads is not None and not 1 <= args.render_threads <= 64:
        parser.error('--render-threads must be 1..64')
    for option in ('steps', 'chunk', 'camera_steps', 'repeat', 'render_steps'):
        if getattr(args, option) < 1:
            parser.error(f'--{option.replace("_", "-")} must be at least 1')
    if args.device is not None:
        if args.backend != 'warp':
            parser.error(f'--device {args.device} places the warp backend; it needs --backend warp (MuJoCo steps on the CPU)')
        if not re.fullmatch(r'cpu|cuda(:\d+)?', args.device):
            parser.error(f"--device takes cpu, cuda or cuda:N (a GPU's index); got {args.device!r}")
    if args.overrides and not args.config:
        parser.error('--set changes a config file: it needs --config CONFIG')
    default_to_egl(headless_only=False)  # (not where no EGL loads: MuJoCo's import would fail, and physics needs none)
    if args.config:
        checked = _checked_config(args.config, args.overrides)
        if checked is None:
            return 1
        args.config, config_env_num = checked
        if not env_nums_given:  # a config's own env_num (or --set env_num=N) is the slot count to measure
            args.env_nums = [config_env_num]
    # Camera rows are robots rendering cameras: none when the camera settings asked for are only 'off'.
    with_camera_rows = camera_rows_wanted(args.cameras, args.no_render, args.config)
    processes.install_cleanup()
    try:
        figures = run(args.robots, args.env_nums, args.cameras, args.api, args.steps, not args.no_async, args.config,
                      log=lambda text: print(text, flush=True), repeat=args.repeat, chunk=args.chunk,
                      camera_steps=args.camera_steps, render_robots=args.render_robots if with_camera_rows else [],
                      render_cameras=args.render_cameras, render_steps=args.render_steps, render_threads=args.render_threads,
                      memory_share=args.memory_share, async_max_workers=args.async_max_workers, timeout_s=args.timeout,
                      backend=args.backend, device=args.device,
                      gym_ids=[i for i in args.gym.split(',') if i] if args.gym else None)
    except KeyboardInterrupt:  # (the signal's handler ended them already: processes.install_cleanup)
        processes.kill_tracked()
        print('internutopia bench: interrupted; every process it had started was ended', file=sys.stderr)
        return 130
    finally:
        processes.kill_tracked()
        processes.uninstall_cleanup()  # (the caller's own handlers again, where main runs in its process)
    print(f'machine: {figures["machine"]}, load at end {figures["load_at_end"]}')
    if args.markdown:
        if figures['rows']:
            print(markdown_table(figures['rows']))
        if figures['camera_rows']:
            print()
            print(camera_rows.camera_markdown_table(figures['camera_rows']))
        if figures['gym_rows']:
            from internutopia.bench.gym_step import gym_markdown_table

            print()
            print(gym_markdown_table(figures['gym_rows']))
    if args.json:
        print(options.json_line(figures))
    return 0
