"""Turning runs into rows: the figures of a case over its repeated runs, and how they print.

A row's ``ratio_vs_limit`` is the median pair ratio of its run (:mod:`internutopia.bench.paired`),
or, with ``--repeat N``, the median of the N runs' medians. ``ratio_q1``/``ratio_q3`` are the
quartiles of all the row's pair ratios (every run's pairs pooled), and ``ratio_min``/``ratio_max``
the lowest and highest run median (``ratio_runs`` lists them all).
"""

from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np

__all__ = ['combine_runs', 'format_row', 'machine', 'markdown_table']

#: Reset figures copied from a run into its row (median over runs).
RESET_KEYS = ('reset_same_structure_ms', 'reset_same_structure_steps', 'reset_new_structure_ms',
              'reset_new_structure_steps', 'peak_memory_with_rebuild_mb')


def combine_runs(robot: str, env_num: int, cameras: str, api: str, runs: list[dict[str, Any]],
                 async_env_steps_per_s: float | None, baseline: dict[str, Any] | None = None) -> dict[str, Any]:
    """One JSON row from the runs of one case (each a :func:`~internutopia.bench.ours.measure_ours`
    result); ``baseline`` adds the process pool's fields (:data:`internutopia.bench.baseline.EMPTY`:
    its workers, whether it was scaled down or skipped and why, the peak memory of its process tree)."""
    medians = [run['ratio'] for run in runs]
    pooled = np.concatenate([run['ratios'] for run in runs])
    q1, q3 = np.percentile(pooled, [25, 75])
    ours_s = float(np.median([run['ours_step_s'] for run in runs]))
    limit_s = float(np.median([run['limit_step_s'] for run in runs]))
    ours = env_num / ours_s
    row: dict[str, Any] = {
        'robot': robot, 'env_num': env_num, 'cameras': cameras, 'api': api,
        'env_steps_per_s': round(ours, 1), 'limit_env_steps_per_s': round(env_num / limit_s, 1),
        'step_ms': round(ours_s * 1e3, 4), 'limit_step_ms': round(limit_s * 1e3, 4),
        'ratio_vs_limit': round(float(np.median(medians)), 3),
        'ratio_q1': round(float(q1), 3), 'ratio_q3': round(float(q3), 3),
        'ratio_min': round(min(medians), 3), 'ratio_max': round(max(medians), 3),
        'ratio_runs': [round(m, 3) for m in medians],
        'runs': len(runs), 'pairs': int(sum(run['pairs'] for run in runs)), 'chunk': runs[0]['chunk'],
        'clean_pairs': int(sum(run.get('clean_pairs', run['pairs']) for run in runs)),
        'async_env_steps_per_s': None if async_env_steps_per_s is None else round(async_env_steps_per_s, 1),
        'ratio_vs_async': None if async_env_steps_per_s is None else round(ours / async_env_steps_per_s, 2),
        'startup_s': round(float(np.median([run['startup_s'] for run in runs])), 3),
        'peak_memory_mb': round(max(run['peak_memory_mb'] for run in runs), 1),
        'load': round(os.getloadavg()[0], 2) if hasattr(os, 'getloadavg') else None,
    }
    for key, value in (baseline or {}).items():
        row.setdefault(key, value)
    for key in RESET_KEYS:
        values = [run[key] for run in runs if key in run]
        if values:
            row[key] = round(float(np.median(values)), 3)
    return row


def format_row(row: dict[str, Any]) -> str:
    """The row as one line of text."""
    text = (f'{row["robot"]:>7} x{row["env_num"]:<3} cameras {row["cameras"]:<3} {row["api"]:>5}: '
            f'{row["env_steps_per_s"]:>10,.0f} env-steps/s  limit {row["limit_env_steps_per_s"]:,.0f}  '
            f'ours/limit {row["ratio_vs_limit"]:.2f} (IQR {row["ratio_q1"]:.2f}-{row["ratio_q3"]:.2f}, '
            f'{row["clean_pairs"]}/{row["pairs"]} pairs clean')
    if row['runs'] > 1:
        text += f'; {row["runs"]} runs min/median/max {row["ratio_min"]:.2f}/{row["ratio_vs_limit"]:.2f}/{row["ratio_max"]:.2f}'
    text += ')'
    if row['ratio_vs_async'] is not None:
        text += f'  ours/async {row["ratio_vs_async"]:.1f}'
    text += f'  start-up {row["startup_s"]:.2f} s  peak memory: ours {row["peak_memory_mb"]:,.0f} MB'
    if row.get('async_peak_memory_mb') is not None:
        workers = row['async_workers']
        text += f', async {row["async_peak_memory_mb"]:,.0f} MB ({workers} worker{"s" if workers != 1 else ""}'
        if row.get('async_scaled') and row.get('async_memory_needed_mb'):
            text += f'; {row["env_num"]} would need about {row["async_memory_needed_mb"]:,.0f} MB'
        text += ')'
    elif row.get('async_memory_needed_mb'):
        text += f', async skipped (about {row["async_memory_needed_mb"]:,.0f} MB needed)'
    if 'reset_same_structure_steps' in row:
        text += (f'  reset: same structure {row["reset_same_structure_steps"]:.1f} steps, '
                 f'new structure {row["reset_new_structure_ms"]:.0f} ms')
    return text


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table of ``docs/performance.md``."""
    lines = ['| robot | env_num | cameras | API | ours (env-steps/s) | limit (env-steps/s) | ours / limit (median) '
             '| pair IQR | runs (min-max) | ours / async | start-up (s) | peak memory (MB) '
             '| reset, same structure (steps) | reset, new structure (ms) | async workers | async peak memory (MB) |',
             '|---|---:|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|']
    for row in rows:
        runs = f'{row["ratio_min"]:.2f}-{row["ratio_max"]:.2f} ({row["runs"]})' if row['runs'] > 1 else ''
        vs_async = 'n/a' if row['ratio_vs_async'] is None else f'{row["ratio_vs_async"]:.1f}'
        same = f'{row["reset_same_structure_steps"]:.1f}' if 'reset_same_structure_steps' in row else ''
        new = f'{row["reset_new_structure_ms"]:.0f}' if 'reset_new_structure_ms' in row else ''
        workers, pool_mb = _pool_cells(row)
        lines.append(f'| {row["robot"]} | {row["env_num"]} | {row["cameras"]} | {row["api"]} '
                     f'| {row["env_steps_per_s"]:,.0f} | {row["limit_env_steps_per_s"]:,.0f} | {row["ratio_vs_limit"]:.2f} '
                     f'| {row["ratio_q1"]:.2f}-{row["ratio_q3"]:.2f} | {runs} | {vs_async} | {row["startup_s"]:.2f} '
                     f'| {row["peak_memory_mb"]:.0f} | {same} | {new} | {workers} | {pool_mb} |')
    return '\n'.join(lines)


def _pool_cells(row: dict[str, Any]) -> tuple[str, str]:
    """The Markdown cells of a row's process pool: its workers and its tree's peak memory (an
    estimate, marked ``~``, for a pool that was scaled down or skipped)."""
    needed = row.get('async_memory_needed_mb')
    if row.get('async_peak_memory_mb') is None:
        return ('skipped' if needed else 'n/a'), (f'~{needed:,.0f}' if needed else '')
    workers = f'{row["async_workers"]} of {row["env_num"]}' if row.get('async_scaled') else f'{row["async_workers"]}'
    memory = f'{row["async_peak_memory_mb"]:,.0f}' + (f' (~{needed:,.0f} for {row["env_num"]})' if row.get('async_scaled') and needed else '')
    return workers, memory


def machine() -> dict[str, Any]:
    """What the figures were measured on, and how busy it was when asked (1-minute load average)."""
    import mujoco

    cpu = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as stream:
            cpu = next(line.split(':', 1)[1].strip() for line in stream if line.startswith('model name'))
    except (OSError, StopIteration):
        pass
    return {'cpu': cpu, 'cores': os.cpu_count(), 'python': platform.python_version(), 'mujoco': mujoco.__version__,
            'platform': platform.platform(),
            'load': round(os.getloadavg()[0], 2) if hasattr(os, 'getloadavg') else None}
