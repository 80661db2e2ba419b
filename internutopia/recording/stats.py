"""Feature statistics in LeRobot's ``stats.json`` form: per episode, then pooled over the dataset.

Each numeric feature gets ``min``, ``max``, ``mean``, ``std``, ``count`` and the quantiles ``q01``,
``q10``, ``q50``, ``q90``, ``q99`` per column (``NaN`` entries, an action with no command, are left
out); a camera gets the same per colour channel over sampled frames, in ``[0, 1]``, shaped
``(3, 1, 1)`` as LeRobot's image statistics are. Pooled quantiles are the count-weighted mean of the
episodes' (LeRobot pools them the same way).

>>> s = episode_stats({'x': np.array([[0.0], [2.0]])}, {})
>>> s['x']['mean'], s['x']['max'], s['x']['count']
([1.0], [2.0], [2])
>>> pooled = pool_stats([s, episode_stats({'x': np.array([[4.0], [4.0]])}, {})])
>>> pooled['x']['mean'], pooled['x']['min']
([2.5], [0.0])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = ['QUANTILES', 'episode_stats', 'pool_stats']

QUANTILES = {'q01': 0.01, 'q10': 0.10, 'q50': 0.50, 'q90': 0.90, 'q99': 0.99}


def _column_stats(values: np.ndarray, keep_dims: tuple[int, ...] = ()) -> dict[str, Any]:
    """Statistics over the first axis of ``(n, k)`` values (``NaN`` left out)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)  # an all-NaN column (a controller never commanded)
        out: dict[str, Any] = {
            'min': np.nanmin(values, axis=0), 'max': np.nanmax(values, axis=0),
            'mean': np.nanmean(values, axis=0), 'std': np.nanstd(values, axis=0),
            'count': np.sum(~np.isnan(values), axis=0).astype(np.int64),
        }
        for name, q in QUANTILES.items():
            out[name] = np.nanquantile(values, q, axis=0)
    return {name: (value.reshape(keep_dims) if keep_dims else value).tolist() for name, value in out.items()}


def episode_stats(columns: dict[str, np.ndarray], images: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Statistics of one episode: ``columns`` maps a feature to its ``(n,)`` or ``(n, k)`` values,
    ``images`` a camera feature to sampled ``uint8 (m, H, W, 3)`` frames."""
    stats: dict[str, dict[str, Any]] = {}
    for name, values in columns.items():
        array = np.asarray(values, dtype=np.float64)
        stats[name] = _column_stats(array.reshape(len(array), -1))
    for name, frames in images.items():
        pixels = frames.reshape(-1, 3).astype(np.float64) / 255.0
        stats[name] = _column_stats(pixels, keep_dims=(3, 1, 1))
        stats[name]['count'] = [len(frames)]
    return stats


def pool_stats(episodes: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Dataset statistics from episodes' (count-weighted means, pooled variances)."""
    if not episodes:
        return {}
    pooled: dict[str, dict[str, Any]] = {}
    for name in episodes[0]:
        parts = [e[name] for e in episodes if name in e]
        counts = np.array([np.asarray(p['count'], np.float64) for p in parts])
        shape = np.asarray(parts[0]['mean']).shape
        if counts.shape[1:] != shape:  # an image's one frame count for all its channels
            counts_column = counts.reshape(len(parts), -1)[:, :1]
            weights = np.broadcast_to(counts_column.reshape(len(parts), *([1] * len(shape))), (len(parts), *shape))
        else:
            weights = counts
        total = weights.sum(axis=0)
        safe = np.where(total > 0, total, 1.0)

        def stacked(key: str, parts: list = parts) -> np.ndarray:
            return np.array([np.asarray(p[key], np.float64) for p in parts])

        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            means = np.nan_to_num(stacked('mean'))
            mean = (weights * means).sum(axis=0) / safe
            second = (weights * (np.nan_to_num(stacked('std')) ** 2 + (means - mean) ** 2)).sum(axis=0) / safe
            entry: dict[str, Any] = {'min': np.nanmin(stacked('min'), axis=0).tolist(),
                                     'max': np.nanmax(stacked('max'), axis=0).tolist(),
                                     'mean': mean.tolist(), 'std': np.sqrt(second).tolist(),
                                     'count': np.sum(counts, axis=0).astype(np.int64).tolist()}
            for key in QUANTILES:
                entry[key] = ((weights * np.nan_to_num(stacked(key))).sum(axis=0) / safe).tolist()
        pooled[name] = entry
    return pooled
