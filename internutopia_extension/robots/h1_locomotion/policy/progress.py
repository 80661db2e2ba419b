"""A run's ``progress.csv`` (one row per checkpoint) and its plot, shared by the SB3 and rsl-rl trainers."""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ['PROGRESS_COLUMNS', 'ProgressLog', 'plot']

#: Columns of ``progress.csv``.
PROGRESS_COLUMNS = ('steps', 'minutes', 'episodes', 'fall_rate', 'mean_seconds', 'velocity_error', 'yaw_rate_error',
                    'episode_reward', 'learning_rate')


def _mean(values: Any) -> float:
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else float('nan')


class ProgressLog:
    """``out/progress.csv``: created with its header when missing; a resumed run's minutes go on
    from the last row's, and :attr:`last_rate` is the learning rate that row recorded (``None``
    for a new run)."""

    def __init__(self, out: Path) -> None:
        self.path = out / 'progress.csv'
        if not self.path.is_file():
            with open(self.path, 'w', encoding='utf-8', newline='') as stream:
                csv.writer(stream).writerow(PROGRESS_COLUMNS)
        self.started = time.perf_counter()
        self.minutes_before = 0.0
        self.last_rate: float | None = None
        with open(self.path, encoding='utf-8') as stream:
            rows = list(csv.DictReader(stream))
        if rows:
            self.minutes_before = float(rows[-1]['minutes'])
            if rows[-1].get('learning_rate'):
                self.last_rate = float(rows[-1]['learning_rate'])

    def append(self, steps: int, episodes: dict[str, Any], learning_rate: float) -> dict[str, Any]:
        """Write the row of ``steps`` from the ``episodes`` that ended since the last row (arrays of
        one value per episode: ``fell``, ``seconds``, ``mean_velocity_error``,
        ``mean_yaw_rate_error``, ``reward``; missing ones count as NaN) and return it."""
        count = len(next(iter(episodes.values()), []))
        nan = np.full(count, np.nan)
        row = {'steps': int(steps),
               'minutes': round(self.minutes_before + (time.perf_counter() - self.started) / 60, 2),
               'episodes': count,
               'fall_rate': _mean(episodes.get('fell', nan)) if count else float('nan'),
               'mean_seconds': _mean(episodes.get('seconds', nan)),
               'velocity_error': _mean(episodes.get('mean_velocity_error', nan)),
               'yaw_rate_error': _mean(episodes.get('mean_yaw_rate_error', nan)),
               'episode_reward': _mean(episodes.get('reward', nan)),
               'learning_rate': float(learning_rate)}
        with open(self.path, 'a', encoding='utf-8', newline='') as stream:
            csv.writer(stream).writerow([row[c] for c in PROGRESS_COLUMNS])
        return row


def format_row(row: dict[str, Any]) -> str:
    """A progress row as one console line."""
    return '  '.join(f'{k} {v:.3g}' if isinstance(v, float) else f'{k} {v:,}' for k, v in row.items())


def plot(progress: str | Path, out: str | Path, title: str = 'H1 walking policy, PPO on CPU') -> None:
    """Fall rate, velocity error and episode length against env steps, from ``progress.csv`` (a
    dashed line where a ``stage`` column, if any, changes: one run continued by another)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    with open(progress, encoding='utf-8') as stream:
        rows = [{k: float(v) if v else float('nan') for k, v in row.items()} for row in csv.DictReader(stream)]
    steps = [r['steps'] / 1e6 for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), dpi=110)
    for ax, key, label in zip(axes, ('fall_rate', 'velocity_error', 'mean_seconds'),
                              ('share of episodes that fell', 'velocity tracking error (m/s)', 'mean episode length (s)'),
                              strict=True):
        ax.plot(steps, [r[key] for r in rows], color='tab:blue')
        # A progress file joined from runs ('stage' column): where each later run took over.
        for before, after, step in zip(rows, rows[1:], steps[1:], strict=False):
            if after.get('stage', 0) != before.get('stage', 0):
                ax.axvline(step, color='gray', linestyle='--', linewidth=0.8)
        ax.set_xlabel('env steps (millions, 50 Hz)')
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
