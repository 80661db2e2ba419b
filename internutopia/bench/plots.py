"""Plots of a benchmark run, from its JSON (``python -m internutopia.bench --json``).

    python -m internutopia.bench --json > run.txt
    python -m internutopia.bench.plots run.txt --out docs/assets   # needs matplotlib (the docs extra)

Reads the last line of the file that is a JSON object (the benchmark prints it last) and draws, per
robot of the robot rows:

- ``bench_<robot>_speed.png``: env-steps per second against ``env_num`` (log scales) of ours
  (each API) and of the physics limit timed beside it, and of the process pool
  (``AsyncVectorEnv``; hollow markers where the pool was scaled down to fewer workers);
- ``bench_<robot>_memory.png``: peak memory against ``env_num`` of ours (one process) and of the
  pool's whole process tree, measured, with the estimate for ``env_num`` workers where the pool
  was scaled down or skipped.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

__all__ = ['load_figures', 'main', 'plot_memory', 'plot_speed']


def load_figures(path: str) -> dict[str, Any]:
    """The benchmark's JSON object: the last line of ``path`` that parses as one."""
    with open(path, encoding='utf-8') as stream:
        lines = stream.read().splitlines()
    for line in reversed(lines):
        if line.startswith('{'):
            return json.loads(line)
    raise ValueError(f'{path}: no JSON object found (run the benchmark with --json)')


def _rows(figures: dict[str, Any], robot: str) -> list[dict[str, Any]]:
    return sorted((r for r in figures['rows'] if r['robot'] == robot and r['cameras'] == 'off'), key=lambda r: r['env_num'])


def _subtitle(figures: dict[str, Any]) -> str:
    machine = figures['machine']
    return f'{machine["cores"]} cores ({machine["cpu"]}), MuJoCo {machine["mujoco"]}, load at start {machine["load"]}'


def _figure() -> Any:
    """A figure and its axes, drawn off screen (matplotlib, the docs extra, imported on use)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6.4, 4.2), dpi=110)


def _save(fig: Any, ax: Any, path: str, ylabel: str, title: str) -> None:
    """Log-log axes against env_num, labelled, legend, written to ``path`` and closed."""
    import matplotlib.pyplot as plt

    ax.set(xscale='log', yscale='log', xlabel='env_num (slots)', ylabel=ylabel, title=title)
    ax.title.set_fontsize(9)
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_speed(figures: dict[str, Any], robot: str, path: str) -> None:
    """Env-steps/s against env_num of ours (per API), the limit and the pool, into ``path``."""
    rows = _rows(figures, robot)
    fig, ax = _figure()
    for api, style, colour in (('array', 'o', 'tab:blue'), ('dict', 's', 'tab:orange')):
        chosen = [r for r in rows if r['api'] == api]
        if chosen:
            steps = [r['env_num'] for r in chosen]
            ax.plot(steps, [r['env_steps_per_s'] for r in chosen], style + '-', color=colour, label=f'ours ({api} API)')
            # each row's limit was timed beside it (paired chunks): the machine's speed of that moment
            ax.plot(steps, [r['limit_env_steps_per_s'] for r in chosen], style + '--', color=colour, alpha=0.5,
                    markerfacecolor='none', label=f'physics limit, timed beside the {api} API')
    first = [r for r in rows if r['api'] == rows[0]['api']] if rows else []
    pool = [r for r in first if r.get('async_env_steps_per_s')]
    if pool:
        ax.plot([r['env_num'] for r in pool], [r['async_env_steps_per_s'] for r in pool], 'v:', color='tab:red',
                label='process pool (AsyncVectorEnv)')
        scaled = [r for r in pool if r.get('async_scaled')]
        if scaled:
            ax.plot([r['env_num'] for r in scaled], [r['async_env_steps_per_s'] for r in scaled], 'v', color='white',
                    markeredgecolor='tab:red', label='pool scaled down (fewer workers)')
    _save(fig, ax, path, 'env-steps per second', f'{robot}: env-steps per second\n{_subtitle(figures)}')


def plot_memory(figures: dict[str, Any], robot: str, path: str) -> None:
    """Peak memory against env_num of ours and of the pool's process tree, into ``path``."""
    rows = _rows(figures, robot)
    first = [r for r in rows if r['api'] == rows[0]['api']] if rows else []
    fig, ax = _figure()
    ax.plot([r['env_num'] for r in first], [r['peak_memory_mb'] for r in first], 'o-', label='ours (one process)')
    measured = [r for r in first if r.get('async_peak_memory_mb')]
    if measured:
        ax.plot([r['env_num'] for r in measured], [r['async_peak_memory_mb'] for r in measured], 'v:', color='tab:red',
                label='process pool, measured (workers run)')
    estimated = [r for r in first if r.get('async_memory_needed_mb') and (r.get('async_scaled') or not r.get('async_peak_memory_mb'))]
    if estimated:
        ax.plot([r['env_num'] for r in estimated], [r['async_memory_needed_mb'] for r in estimated], 'v', color='white',
                markeredgecolor='tab:red', label='process pool of env_num workers, estimated')
    _save(fig, ax, path, 'peak resident memory (MB)', f'{robot}: peak memory of the whole process tree\n{_subtitle(figures)}')


def main(argv: list[str] | None = None) -> list[str]:
    """``python -m internutopia.bench.plots RUN --out FOLDER``; returns the files written."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('run', help='the output of python -m internutopia.bench --json (its last JSON line is read)')
    parser.add_argument('--out', default='.', help='folder for the PNG files (default: here)')
    args = parser.parse_args(argv)
    figures = load_figures(args.run)
    os.makedirs(args.out, exist_ok=True)
    written = []
    for robot in dict.fromkeys(r['robot'] for r in figures['rows']):
        for kind, draw in (('speed', plot_speed), ('memory', plot_memory)):
            path = os.path.join(args.out, f'bench_{robot}_{kind}.png')
            draw(figures, robot, path)
            written.append(path)
            print(path)
    return written


if __name__ == '__main__':
    main()
