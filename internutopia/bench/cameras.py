"""Camera rows: robots rendering a camera every step, against what users would run without us.

For each camera setting of :data:`SETTINGS` (the H1's head or third-person camera at 320x240, RGB
or RGB-D, or RGB-D with the perception annotations: semantic and instance segmentation and tight
2D boxes; rendered on every physics step) and each ``env_num``, one row compares:

- **ours**: ``vec_env.Env.step`` with one such camera per robot (env-steps/s, which is frames/s);
- **render limit**: a plain ``mujoco.Renderer`` loop (MuJoCo's defaults: 4x multisampling, mirror
  reflections, full-detail meshes; RGB-D renders twice, and with annotations a third time, in
  MuJoCo's segmentation mode) drawing the same camera of the same model
  at the slots' current states, in the same process, in pairs with ours
  (:func:`internutopia.bench.paired.time_pairs`): ``ours / render limit`` is what our pipeline
  (level of detail, no hidden multisampling, one pass per frame, batched frames) adds;
- **async** (``ratio_vs_async``): ``gymnasium.vector.AsyncVectorEnv`` over ``env_num`` single-robot
  envs that step the same robot and render the camera with a plain ``mujoco.Renderer`` at MuJoCo's
  defaults: what a user writes without us;
- **async, ours** (``ratio_vs_async_ours``): the same over ``env_num`` of our own ``gym_env.Env``
  with the camera on: our per-frame pipeline in a process pool, without batching; it separates
  what level of detail and the defaults give from what batching gives. Ours and this pool are
  timed side by side, in alternating chunks in one fresh process
  (:func:`internutopia.bench.camera_pool.measure_beside_pool`): the ratio is the median of the
  pairs, and ``ours_beside_pool_env_steps_per_s`` is ours' speed in them.

Both async forms return the images as their observations (through shared memory, as a policy
would need them). An async case whose processes would not fit in the memory free at the time
(estimated from its one-env case) is skipped, and the progress line says so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.bench.camera_pool import measure_async_cameras, measure_beside_pool
from internutopia.bench.camera_setup import (
    RESOLUTION,
    ROBOTS,
    SETTINGS,
    CameraSetting,
    PlainCamera,
    camera_config,
    path_action,
)
from internutopia.bench.fresh import run_in_fresh_process
from internutopia.bench.memory import memory_budget
from internutopia.bench.ours import peak_memory_mb
from internutopia.bench.paired import ChunkReplay, summarize, time_pairs

__all__ = ['RESOLUTION', 'ROBOTS', 'SETTINGS', 'CameraSetting', 'PlainCamera', 'RenderLimit', 'camera_config',
           'camera_markdown_table', 'estimate_seconds', 'format_camera_row', 'measure_async_cameras',
           'measure_beside_pool', 'measure_camera_ours', 'measure_lod_quality', 'path_action', 'psnr', 'run_cameras']

#: Pairs timed and thrown away first (warms caches and the render threads).
WARM_PAIRS = 1


class RenderLimit(ChunkReplay):
    """The render limit for :func:`~internutopia.bench.paired.time_pairs`: after each chunk of our
    steps, a plain :class:`PlainCamera` loop draws ``frames`` frames (one slot after another, at
    their current states); its time per env-step is its time per frame times ``env_num`` (one
    camera per robot)."""

    def __init__(self, env: Any, setting: CameraSetting, frames: int) -> None:
        world = env.runner.world
        self.pack = world.pack(0)
        self.slots = [int(s) for s in self.pack.slots]
        self.camera = PlainCamera(self.pack.drawn_model, 0, setting.depth, setting.annotations)
        self.frames = max(1, int(frames))
        self.next = 0

    def replay(self) -> float:
        began = time.perf_counter()
        for _ in range(self.frames):
            slot = self.slots[self.next % len(self.slots)]
            self.next += 1
            self.camera.frame(self.pack.drawn_data(slot))
        return (time.perf_counter() - began) / self.frames * len(self.slots)

    def close(self) -> None:
        self.camera.close()


# ------------------------------------------------------------------------------------------------
# ours, in a fresh process
def _measure(robot: str, setting: str, env_num: int, steps: int, chunk: int, limit_frames: int,
             threads: int | None = None) -> dict[str, Any]:
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    config = camera_config(robot, setting, env_num, threads=threads)
    started = time.perf_counter()
    env = Env(config)
    env.reset()
    startup_s = time.perf_counter() - started
    actions = [path_action(robot)] * env_num

    def step() -> None:
        env.step(actions)

    for _ in range(3):
        step()
    memory_mb = peak_memory_mb()
    limit = RenderLimit(env, SETTINGS[setting], limit_frames)
    chunk = max(1, min(chunk, steps))
    time_pairs(step, limit, WARM_PAIRS, chunk)
    ours, theirs, clean = time_pairs(step, limit, max(1, steps // chunk), chunk)
    limit.close()
    env.close()
    out: dict[str, Any] = summarize(ours, theirs, clean)
    from internutopia.core.backend.mujoco.render.gl import RASTERIZER_THREADS_VARIABLE, rasterizing_inline

    # The plain renderer draws on MuJoCo's display, which ours may have made without Mesa's
    # rasterizer threads (two render workers: see internutopia.core.backend.mujoco.render.gl), as
    # does a user's LP_NUM_THREADS=0.
    limit_inline = rasterizing_inline()['mujoco'] or os.environ.get(RASTERIZER_THREADS_VARIABLE, '').strip() == '0'
    out.update({'chunk': chunk, 'startup_s': startup_s, 'peak_memory_mb': memory_mb, 'limit_inline': limit_inline})
    return out


def measure_camera_ours(robot: str, setting: str, env_num: int, steps: int, chunk: int, limit_frames: int,
                        threads: int | None = None) -> dict[str, Any]:
    """Ours paired with the render limit, in a fresh process: the figures of
    :func:`~internutopia.bench.paired.summarize` (``ratio`` is render limit time / our time per
    env-step), ``startup_s`` and ``peak_memory_mb``."""
    return run_in_fresh_process(_measure, robot, setting, env_num, steps, chunk, limit_frames, threads,
                                what=f'camera case {robot} x{env_num} {setting}')


# ------------------------------------------------------------------------------------------------
# AsyncVectorEnv, in two forms
# ------------------------------------------------------------------------------------------------
# level of detail: how close its frames are to full detail
def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio (dB) of two uint8 images; ``inf`` when equal."""
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float('inf') if mse == 0 else 10.0 * np.log10(255.0 ** 2 / mse)


def _quality(robot: str, steps: list[int]) -> dict[str, Any]:
    import importlib

    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    module, cfg_class, head, third, path = ROBOTS[robot]
    configs = importlib.import_module(module)
    sensors = [getattr(configs, name).update(resolution=RESOLUTION, enable=True) for name in (head, third)]
    frames: dict[bool, list[dict[str, np.ndarray]]] = {}
    faces: dict[bool, int] = {}
    for lod in (True, False):
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

        cfg = getattr(configs, cfg_class)(controllers=[configs.move_by_speed_cfg, configs.move_along_path_cfg], sensors=sensors)
        env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_lod=lod), env_num=1, metrics_save_path='none',
                         task_configs=[SingleInferenceTaskCfg(robots=[cfg])]))
        env.reset()
        taken = []
        for step in range(max(steps) + 1):
            obs, *_ = env.step([path_action(robot)])
            if step in steps:
                taken.append({name: obs[0][robot]['sensors'][name]['rgba'][..., :3].copy() for name in obs[0][robot]['sensors']})
        from internutopia.core.backend.mujoco.render import camera_renderers

        faces[lod] = int(camera_renderers(env.runner.world)[0].render_model.model.mesh_facenum.sum())
        frames[lod] = taken
        env.close()
    out: dict[str, Any] = {'robot': robot, 'steps': steps, 'faces_full': faces[False], 'faces_lod': faces[True]}
    for name in frames[True][0]:
        values = [psnr(a[name], b[name]) for a, b in zip(frames[True], frames[False], strict=True)]
        view = 'head' if name == getattr(configs, head).name else 'tp'
        finite = [v for v in values if np.isfinite(v)]
        # None: every frame identical to full detail (JSON has no infinity).
        out[f'{view}_psnr_db_min'] = round(float(min(finite)), 1) if finite else None
        out[f'{view}_psnr_db_mean'] = round(float(np.mean(finite)), 1) if finite else None
        out[f'{view}_identical_frames'] = len(values) - len(finite)
    return out


def measure_lod_quality(robot: str = 'h1', steps: tuple[int, ...] = (0, 120, 240, 480, 960)) -> dict[str, Any]:
    """PSNR of the level-of-detail frames against full-detail frames of the robot's head and
    third-person cameras (320x240), at several steps along its path, in a fresh process: the lowest
    (``*_psnr_db_min``) and the mean over the steps, and the triangles drawn with and without LOD."""
    return run_in_fresh_process(_quality, robot, list(steps), what=f'LOD quality of {robot}')


# ------------------------------------------------------------------------------------------------
# the driver
def _steps_for(env_num: int, steps: int) -> int:
    """Timed steps of a case: fewer steps when many slots render (each step is many frames)."""
    return max(4, min(steps, (steps * 8) // max(env_num, 1)))


def estimate_seconds(env_nums: list[int], settings: list[str], steps: int, with_async: bool) -> float:
    """A rough length of the camera rows on a 2-core machine (seconds), for ``--help`` and the log:
    process start-ups, and frames at the speeds measured there on 2026-11-22 (ours ~600/s head,
    ~350/s third person; plain renderer ~15/s head, ~8/s third person, in the limit and in a pool;
    our env in a pool ~350/s, ours beside it ~550/s)."""
    total = 0.0
    for env_num in env_nums:
        for name in settings:
            setting = SETTINGS[name]
            frames = env_num * _steps_for(env_num, steps) * 2  # two halves of every pair
            ours = 6.0 + frames / (600.0 if setting.view == 'head' else 350.0) / 2
            plain = (15.0 if setting.view == 'head' else 8.0) / (1.5 if setting.depth else 1.0) / (1.4 if setting.annotations else 1.0)
            limit = (_steps_for(env_num, steps) // 4 + WARM_PAIRS) * 4 / plain
            total += ours + limit
            if with_async and env_num < 64:  # 64 single-env processes do not fit in 24 GB: skipped
                start = 4.0 + env_num * 1.0  # env processes starting on 2 cores
                async_frames = env_num * (_steps_for(env_num, steps) + 3)
                # the plain-renderer pool, then the pool of our env in pairs with ours
                total += 2 * start + async_frames / plain + async_frames / 350.0 + async_frames / 550.0
    return total


def _lowest(quality: dict[str, Any], view: str) -> str:
    value = quality[f'{view}_psnr_db_min']
    return 'identical frames' if value is None else f'{value} dB (mean {quality[f"{view}_psnr_db_mean"]} dB)'


def run_cameras(robots: list[str], env_nums: list[int], settings: list[str], steps: int, chunk: int, with_async: bool,
                log: Callable[[str], Any] = print, quality_rows: list[dict[str, Any]] | None = None,
                quality: bool = True, threads: int | None = None) -> list[dict[str, Any]]:
    """Measure the camera rows; one progress line per case, one row line when it is done. The
    level of detail's quality (:func:`measure_lod_quality`) is measured first, per robot, and
    appended to ``quality_rows`` (unless ``quality`` is false). ``threads`` sets ours'
    ``rendering_threads`` (``None``: the default, one per core)."""
    quality_rows = [] if quality_rows is None else quality_rows
    rows = []
    for robot in robots if quality else []:
        log(f'[camera quality] {robot}: level of detail against full detail ...')
        measured = measure_lod_quality(robot)
        log(f'  {robot}: LOD draws {measured["faces_lod"]:,} of {measured["faces_full"]:,} triangles; lowest PSNR vs full '
            f'detail over {len(measured["steps"])} frames: head camera {_lowest(measured, "head")}, third person '
            f'{_lowest(measured, "tp")}')
        quality_rows.append(measured)
    cases = [(robot, env_num, setting) for robot in robots for setting in settings for env_num in env_nums]
    began = time.perf_counter()
    left = estimate_seconds(env_nums, settings, steps, with_async) * len(robots)
    one_env_mb: dict[tuple[str, str, bool], float] = {}
    for index, (robot, env_num, setting) in enumerate(cases):
        elapsed = time.perf_counter() - began
        log(f'[camera case {index + 1}/{len(cases)}] {robot} x{env_num} {setting}: measuring '
            f'(elapsed {elapsed / 60:.1f} min, about {max(left - elapsed, 0) / 60:.0f} min left)')
        case_steps = _steps_for(env_num, steps)
        async_rate: float | None = None
        beside: dict[str, Any] | None = None
        skipped: dict[str, str] = {}
        pool_mb: dict[str, float] = {}
        ours_chunk = max(1, min(chunk, case_steps // 3))
        if with_async:
            for key, plain in (('async', True), ('async_ours', False)):
                # The pool of our env runs beside ours (about one more env's memory: 650-670 MB
                # for ours at H1 x16 against 600 for one worker).
                processes = env_num if plain else env_num + 1
                needed = processes * one_env_mb.get((robot, setting, plain), 0.0)
                budget = memory_budget()
                if needed > budget.usable_mb:
                    skipped[key] = f'{processes} processes need about {needed:,.0f} MB, more than the budget of {budget.describe()}'
                    log(f'  {robot} x{env_num} {setting}: AsyncVectorEnv ({"plain renderer" if plain else "our gym_env"}) '
                        f'skipped: {skipped[key]}')
                    continue
                try:
                    if plain:
                        async_rate, process_mb, pool_mb[key] = measure_async_cameras(robot, setting, env_num,
                                                                                     max(4, case_steps // 2), plain)
                    else:
                        beside = measure_beside_pool(robot, setting, env_num, case_steps, ours_chunk, threads)
                        process_mb, pool_mb[key] = beside['pool_worker_peak_mb'], beside['pool_workers_mb']
                except Exception as exc:  # e.g. processes that do not fit after all
                    skipped[key] = f'failed ({type(exc).__name__}: {exc})'
                    log(f'  {robot} x{env_num} {setting}: AsyncVectorEnv {skipped[key]}; no ratio')
                    continue
                one_env_mb.setdefault((robot, setting, plain), process_mb)
        result = measure_camera_ours(robot, setting, env_num, case_steps, ours_chunk, limit_frames=4, threads=threads)
        row = camera_row(robot, setting, env_num, result, async_rate, beside, skipped)
        row['render_threads'] = threads
        # The plain-renderer pool's whole process tree; the pool of our env's workers (ours drove it).
        row['async_peak_memory_mb'] = {k: round(v, 1) for k, v in pool_mb.items()}
        rows.append(row)
        log(format_camera_row(row))
    return rows


def camera_row(robot: str, setting: str, env_num: int, result: dict[str, Any], async_rate: float | None,
               beside: dict[str, Any] | None, skipped: dict[str, str] | None = None) -> dict[str, Any]:
    """One JSON row of the camera table from a :func:`measure_camera_ours` result, the plain-renderer
    pool's rate and a :func:`~internutopia.bench.camera_pool.measure_beside_pool` result (``None``
    where skipped). ``ratio_vs_async_ours`` is the median of the side-by-side pairs of ours and the
    pool of our env, and ``ours_beside_pool_env_steps_per_s`` ours' speed in those pairs."""
    ours = env_num / result['ours_step_s']
    limit = env_num / result['limit_step_s']
    chosen = SETTINGS[setting]
    row = {
        'robot': robot, 'env_num': env_num, 'cameras': setting, 'view': chosen.view, 'depth': chosen.depth,
        'annotations': chosen.annotations,
        'resolution': list(RESOLUTION),
        'env_steps_per_s': round(ours, 1), 'frames_per_s': round(ours, 1),
        'render_limit_frames_per_s': round(limit, 1),
        # A pair's ratio is the limit's time over ours for the same env-steps: ours' speed over the limit's.
        'ratio_vs_render_limit': round(result['ratio'], 2),
        'render_limit_ratio_q1': round(result['ratio_q1'], 2), 'render_limit_ratio_q3': round(result['ratio_q3'], 2),
        'pairs': result['pairs'], 'chunk': result['chunk'],
        # True: the render limit drew on a display without Mesa's rasterizer threads (slower than a
        # plain renderer alone in its process); the async columns are the comparison then.
        'render_limit_inline': bool(result.get('limit_inline', False)),
        'async_env_steps_per_s': None if async_rate is None else round(async_rate, 1),
        'ratio_vs_async': None if async_rate is None else round(ours / async_rate, 2),
        'ours_beside_pool_env_steps_per_s': None, 'async_ours_env_steps_per_s': None, 'ratio_vs_async_ours': None,
        'async_ours_ratio_q1': None, 'async_ours_ratio_q3': None, 'async_ours_pairs': None, 'async_ours_chunk': None,
        'async_skipped': dict(skipped or {}),
        'startup_s': round(result['startup_s'], 3), 'peak_memory_mb': round(result['peak_memory_mb'], 1),
    }
    if beside is not None:
        row.update({'ours_beside_pool_env_steps_per_s': round(env_num / beside['ours_step_s'], 1),
                    'async_ours_env_steps_per_s': round(env_num / beside['limit_step_s'], 1),
                    'ratio_vs_async_ours': round(beside['ratio'], 2),
                    'async_ours_ratio_q1': round(beside['ratio_q1'], 2), 'async_ours_ratio_q3': round(beside['ratio_q3'], 2),
                    'async_ours_pairs': beside['pairs'], 'async_ours_chunk': beside['chunk']})
    return row


def format_camera_row(row: dict[str, Any]) -> str:
    """The row as one line of text."""
    text = (f'{row["robot"]:>7} x{row["env_num"]:<3} camera {row["cameras"]:<9}: {row["frames_per_s"]:>8,.0f} frames/s  '
            f'render limit {row["render_limit_frames_per_s"]:,.1f}'
            f'{" (no Mesa rasterizer threads)" if row.get("render_limit_inline") else ""}  ours/render limit {row["ratio_vs_render_limit"]:.1f} '
            f'(IQR {row["render_limit_ratio_q1"]:.1f}-{row["render_limit_ratio_q3"]:.1f})')
    text += '  ours/async ' + ('n/a' if row['ratio_vs_async'] is None else f'{row["ratio_vs_async"]:.2f}')
    if row['ratio_vs_async_ours'] is None:
        text += '  ours/async(our env) n/a'
    else:
        text += (f'  ours/async(our env) {row["ratio_vs_async_ours"]:.2f} (IQR {row["async_ours_ratio_q1"]:.2f}-'
                 f'{row["async_ours_ratio_q3"]:.2f}, side by side: ours {row["ours_beside_pool_env_steps_per_s"]:,.0f}, '
                 f'pool {row["async_ours_env_steps_per_s"]:,.0f} frames/s)')
    return text + f'  start-up {row["startup_s"]:.2f} s  peak {row["peak_memory_mb"]:.0f} MB'


def camera_markdown_table(rows: list[dict[str, Any]]) -> str:
    """The camera rows as the Markdown table of ``docs/rendering.md``."""
    lines = ['| robot | camera | env_num | ours (frames/s) | render limit (frames/s) | ours / render limit '
             '| async, plain renderer (env-steps/s) | ours / async | ours beside the pool of our env (frames/s) '
             '| async, our gym_env (env-steps/s) | ours / async (our env) |',
             '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|']

    def cell(value: float | None, digits: int) -> str:
        return 'skipped' if value is None else f'{value:,.{digits}f}'

    for row in rows:
        lines.append(f'| {row["robot"]} | {row["cameras"]} | {row["env_num"]} | {row["frames_per_s"]:,.0f} '
                     f'| {row["render_limit_frames_per_s"]:,.1f} | {row["ratio_vs_render_limit"]:.1f} '
                     f'| {cell(row["async_env_steps_per_s"], 1)} | {cell(row["ratio_vs_async"], 2)} '
                     f'| {cell(row["ours_beside_pool_env_steps_per_s"], 0)} | {cell(row["async_ours_env_steps_per_s"], 1)} '
                     f'| {cell(row["ratio_vs_async_ours"], 2)} |')
    return '\n'.join(lines)
