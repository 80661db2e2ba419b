"""The benchmark's command line and its driver over cases (``python -m internutopia.bench``)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

from internutopia.bench import cameras as camera_rows
from internutopia.bench.alternative import measure_async
from internutopia.bench.cases import CAMERAS, CASES, get_case
from internutopia.bench.ours import available_memory_mb, measure_ours
from internutopia.bench.report import combine_runs, format_row, machine, markdown_table

__all__ = ['main', 'run']

APIS = ('dict', 'array')


def run(robots: list[str], env_nums: list[int], cameras: list[str], apis: list[str], steps: int, with_async: bool,
        user_config: str | None = None, log: Callable[[str], Any] = print, repeat: int = 1, chunk: int = 20,
        camera_steps: int | None = None, render_robots: list[str] | None = None,
        render_cameras: list[str] | None = None, render_steps: int = 24,
        render_threads: int | None = None, backend: str | None = None, device: str | None = None) -> dict[str, Any]:
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
        backend, device: the physics backend and device of ours' rows (``None``: the cases' own, MuJoCo).
    """
    rows, resets = [], []
    names = ['config'] if user_config else robots
    first_machine = machine()
    for robot in names:
        one_process_mb: dict[str, float] = {}  # by camera setting, from the 1-slot case when measured
        for env_num in env_nums:
            for camera in cameras:
                case_steps = steps if camera == 'off' or camera_steps is None else camera_steps
                alternative = None
                needed_mb = env_num * one_process_mb.get(camera, 0.0)
                label = f'{robot} x{env_num} cameras {camera}'
                # Fork-server children share their imported modules, so a process costs somewhat
                # less than a fresh one; past 1.2x the free memory the run would be killed.
                if with_async and needed_mb > 1.2 * available_memory_mb():
                    log(f'{label}: AsyncVectorEnv skipped: {env_num} processes need about {needed_mb:,.0f} MB, '
                        f'more than this machine has free')
                elif with_async:
                    try:
                        alternative = measure_async(robot, env_num, camera, case_steps, user_config)
                        log(f'{label}: AsyncVectorEnv {alternative:,.0f} env-steps/s')
                    except Exception as exc:  # e.g. env_num processes that do not fit in memory
                        log(f'{label}: AsyncVectorEnv failed ({type(exc).__name__}: {exc}); no ratio')
                for api in apis:
                    if api not in get_case(robot, user_config).apis:
                        log(f'{label}: the {api} API does not apply to this case; skipped')
                        continue
                    with_resets = api == 'dict' and camera == 'off'
                    runs = []
                    # Rows with cameras are bound by rendering (ours/limit near 0): one run says it.
                    case_repeat = repeat if camera == 'off' else 1
                    for index in range(case_repeat):
                        result = measure_ours(robot, env_num, camera, api, case_steps, chunk, user_config, with_resets,
                                              backend, device)
                        runs.append(result)
                        if case_repeat > 1:
                            log(f'{label} {api} run {index + 1}/{case_repeat}: ours/limit {result["ratio"]:.3f} '
                                f'(IQR {result["ratio_q1"]:.3f}-{result["ratio_q3"]:.3f}, {result["pairs"]} pairs '
                                f'of {result["chunk"]} steps, {result["clean_pairs"]} clean)')
                    if env_num == 1:
                        one_process_mb[camera] = max(r['peak_memory_mb'] for r in runs)
                    name = os.path.basename(user_config) if user_config else robot
                    row = combine_runs(name, env_num, camera, api, runs, alternative)
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
    plain = [r for r in rows if r['api'] == rows[0]['api'] and r['cameras'] == 'off'] if rows else []
    return {'camera_rows': cameras_out, 'lod_quality': quality,'machine': first_machine, 'load_at_end': machine()['load'], 'steps': steps, 'chunk': chunk,
            'repeat': repeat, 'rows': rows, 'resets': resets,
            'startup_s': {f'{r["robot"]}x{r["env_num"]}': r['startup_s'] for r in plain},
            'peak_memory_mb': {f'{r["robot"]}x{r["env_num"]}': r['peak_memory_mb'] for r in plain}}


def _csv(kind: Any) -> Any:
    return lambda text: [kind(part) for part in text.split(',') if part]


def _parser() -> argparse.ArgumentParser:
    from internutopia import bench

    cases = '\n'.join(f'  {name:<8} {case.description}' for name, case in CASES.items())
    camera_minutes = camera_rows.estimate_seconds([1, 4, 16, 64], list(camera_rows.SETTINGS), 24, True) / 60
    length = (f'run length (2-core machine, otherwise idle): the camera rows of the default options take about '
              f'{camera_minutes:.0f} minutes (AsyncVectorEnv included; --no-render skips them, --no-async their '
              f'process pools); the robot rows about 9 minutes, and 2.5 more per further --repeat (docs/performance.md).')
    parser = argparse.ArgumentParser(prog='internutopia bench', description=bench.__doc__.split('\n\n')[0],
                                     epilog=f'cases (--robots):\n{cases}\n\n{length}\n\n'
                                            f'The method: python -m pydoc internutopia.bench (camera rows: '
                                            f'python -m pydoc internutopia.bench.cameras)',
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--robots', type=_csv(str), default=[n for n, c in CASES.items() if c.default],
                        help=f'comma-separated cases: {",".join(CASES)} (default: all default cases)')
    parser.add_argument('--env-nums', type=_csv(int), default=[1, 4, 16, 64], help='comma-separated slot counts')
    parser.add_argument('--cameras', type=_csv(str), default=['off', 'on'],
                        help=f'comma-separated camera settings: {",".join(CAMERAS)}')
    parser.add_argument('--api', type=_csv(str), default=list(APIS), help='dict, array, or dict,array')
    parser.add_argument('--steps', type=int, default=600, help='timed steps of ours per run (default 600)')
    parser.add_argument('--chunk', type=int, default=20, help='steps per timed chunk; one ours/limit pair each (default 20)')
    parser.add_argument('--camera-steps', type=int, default=60,
                        help='timed steps per run with cameras on, where rendering makes steps slow (default 60)')
    parser.add_argument('--repeat', type=int, default=1, help='runs per case with cameras off, each in a fresh process; rows with cameras on, '
                        'bound by rendering, run once (default 1)')
    parser.add_argument('--no-async', action='store_true', help='skip the AsyncVectorEnv comparison')
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
    parser.add_argument('--markdown', action='store_true', help="print the rows as docs/performance.md's table")
    parser.add_argument('--json', action='store_true', help='print all figures as one JSON object on the last line')
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m internutopia.bench``: see ``--help``."""
    parser = _parser()
    args = parser.parse_args(argv)
    for robot in args.robots:
        if robot not in CASES:
            parser.error(f'unknown robot {robot!r}; choose from {", ".join(CASES)}')
    if any(api not in APIS for api in args.api):
        parser.error('--api takes dict, array or dict,array')
    for camera in args.cameras:
        if camera not in CAMERAS:
            parser.error(f'unknown camera setting {camera!r}; --cameras takes {", ".join(CAMERAS)}')
    for name in args.render_cameras:
        if name not in camera_rows.SETTINGS:
            parser.error(f'unknown camera row setting {name!r}; --render-cameras takes {", ".join(camera_rows.SETTINGS)}')
    for robot in args.render_robots:
        if robot not in camera_rows.ROBOTS:
            parser.error(f'no camera rows for robot {robot!r}; --render-robots takes {", ".join(camera_rows.ROBOTS)}')
    if any(n < 1 for n in args.env_nums):
        parser.error('--env-nums must be positive')
    if args.render_threads is not None and not 1 <= args.render_threads <= 64:
        parser.error('--render-threads must be 1..64')
    for option in ('steps', 'chunk', 'camera_steps', 'repeat', 'render_steps'):
        if getattr(args, option) < 1:
            parser.error(f'--{option.replace("_", "-")} must be at least 1')
    os.environ.setdefault('MUJOCO_GL', 'egl')
    figures = run(args.robots, args.env_nums, args.cameras, args.api, args.steps, not args.no_async, args.config,
                  log=lambda text: print(text, flush=True), repeat=args.repeat, chunk=args.chunk,
                  camera_steps=args.camera_steps, render_robots=[] if args.no_render or args.config else args.render_robots,
                  render_cameras=args.render_cameras, render_steps=args.render_steps, render_threads=args.render_threads,
                  backend=args.backend, device=args.device)
    print(f'machine: {figures["machine"]}, load at end {figures["load_at_end"]}')
    if args.markdown:
        if figures['rows']:
            print(markdown_table(figures['rows']))
        if figures['camera_rows']:
            print()
            print(camera_rows.camera_markdown_table(figures['camera_rows']))
    if args.json:
        print(json.dumps(figures))
    return 0
