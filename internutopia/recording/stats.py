"""Feature statistics in LeRobot's ``stats.json`` form: per episode, then pooled over the dataset.

Each numeric feature gets ``min``, ``max``, ``mean``, ``std``, ``count`` and the quantiles ``q01``,
``q10``, ``q50``, ``q90``, ``q99`` per column (``NaN`` entries, an action with no command, are left
out); a camera gets the same per colour channel over sampled frames, in ``[0, 1]``, shaped
``(3, 1, 1)`` as LeRobot's image statistics are. Pooled quantiles are the count-weighted mean of the
episodes' (LeRobot pools them the same way).

:func:`pool_stats` pools a list of episodes' statistics at once; :class:`RunningStats` keeps the
same pooled values as running aggregates (count, mean, sum of squared deviations, min, max, the
count-weighted quantile sums), updated in constant time per episode: the writer adds each saved
episode to it instead of re-pooling every episode on every save. Both give the same values (to
floating-point rounding: the variances are combined pairwise, Chan et al.'s update, instead of
all at once).

>>> s = episode_stats({'x': np.array([[0.0], [2.0]])}, {})
>>> s['x']['mean'], s['x']['max'], s['x']['count']
([1.0], [2.0], [2])
>>> pooled = pool_stats([s, episode_stats({'x': np.array([[4.0], [4.0]])}, {})])
>>> pooled['x']['mean'], pooled['x']['min']
([2.5], [0.0])
>>> running = RunningStats().plus(s).plus(episode_stats({'x': np.array([[4.0], [4.0]])}, {}))
>>> running.result()['x']['mean'], len(running)
([2.5], 2)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = ['QUANTILES', 'RunningStats', 'episode_stats', 'pool_stats']

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


class _Feature:
    """One feature's running aggregate (float64 arrays shaped like its ``mean``)."""

    __slots__ = ('count', 'frames', 'max', 'mean', 'min', 'quantiles', 'squares', 'weight')

    def __init__(self, shape: tuple[int, ...], count_shape: tuple[int, ...]) -> None:
        self.weight = np.zeros(shape)  # the count weighting each column (an image: its frames, per channel)
        self.count = np.zeros(count_shape, np.int64)  # the ``count`` entry as pool_stats sums it
        self.mean = np.zeros(shape)
        self.squares = np.zeros(shape)  # sum of squared deviations from the mean
        self.min = np.full(shape, np.nan)
        self.max = np.full(shape, np.nan)
        self.quantiles = {key: np.zeros(shape) for key in QUANTILES}
        self.frames = 0


class RunningStats:
    """The dataset's statistics as running aggregates: :meth:`plus` one episode's
    (:func:`episode_stats`), :meth:`result` the ``stats.json`` content, equal to
    :func:`pool_stats` of every episode added. Immutable: :meth:`plus` returns a new aggregate
    (so a save that fails keeps the one before it); each costs time and memory in proportion to the
    features' sizes, not to the episodes added before."""

    def __init__(self) -> None:
        self._features: dict[str, _Feature] = {}
        self._episodes = 0

    def __len__(self) -> int:
        """Episodes added."""
        return self._episodes

    def plus(self, episode: dict[str, dict[str, Any]]) -> RunningStats:
        """These statistics with one more episode's."""
        out = RunningStats()
        out._episodes = self._episodes + 1
        # pool_stats pools the features of the first episode: the later ones' others are left out
        names = list(self._features) if self._episodes else list(episode)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            for name in names:
                old = self._features.get(name)
                part = episode.get(name)
                if part is None:
                    if old is not None:
                        out._features[name] = old
                    continue
                out._features[name] = _combine(old, part)
        return out

    def result(self) -> dict[str, dict[str, Any]]:
        """The pooled statistics (``{}`` before any episode), as :func:`pool_stats` gives them."""
        pooled: dict[str, dict[str, Any]] = {}
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            for name, feature in self._features.items():
                safe = np.where(feature.weight > 0, feature.weight, 1.0)
                entry: dict[str, Any] = {'min': feature.min.tolist(), 'max': feature.max.tolist(),
                                         'mean': feature.mean.tolist(), 'std': np.sqrt(feature.squares / safe).tolist(),
                                         'count': feature.count.tolist()}
                for key in QUANTILES:
                    entry[key] = (feature.quantiles[key] / safe).tolist()
                pooled[name] = entry
        return pooled


def _combine(old: _Feature | None, part: dict[str, Any]) -> _Feature:
    """``old`` with one episode's statistics of the feature (``part``) added, as a new aggregate."""
    mean_i = np.asarray(part['mean'], np.float64)
    shape = mean_i.shape
    count_i = np.asarray(part['count'], np.float64)
    if count_i.shape != shape:  # an image's one frame count for all its channels
        weight_i = np.broadcast_to(count_i.reshape(-1)[:1].reshape([1] * len(shape)), shape).astype(np.float64)
    else:
        weight_i = count_i
    new = _Feature(shape, count_i.shape)
    if old is None:
        old = _Feature(shape, count_i.shape)
    mean_i = np.nan_to_num(mean_i)
    variance_i = np.nan_to_num(np.asarray(part['std'], np.float64)) ** 2
    new.weight = old.weight + weight_i
    safe = np.where(new.weight > 0, new.weight, 1.0)
    delta = mean_i - old.mean
    new.mean = old.mean + delta * weight_i / safe
    new.squares = old.squares + weight_i * variance_i + delta ** 2 * old.weight * weight_i / safe
    new.count = old.count + np.asarray(part['count']).astype(np.int64)
    new.min = np.fmin(old.min, np.asarray(part['min'], np.float64))
    new.max = np.fmax(old.max, np.asarray(part['max'], np.float64))
    new.quantiles = {key: old.quantiles[key] + weight_i * np.nan_to_num(np.asarray(part[key], np.float64))
                     for key in QUANTILES}
    return new
