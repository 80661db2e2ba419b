"""The observation rows a vector env keeps of its sub-environments, and returns a copy of."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from internutopia.core.gym_vector.features import ObsLayout

__all__ = ['ObservationRows']


class ObservationRows:
    """Every env's last observation in the vector env's own layout: one ``float32`` array of
    ``(num_envs, D)`` (``mode='flat'``) or a dict of ``(num_envs, ...)`` arrays (``mode='dict'``).

    Rows are written from per-slot observation dicts (the dict path, upstream-style extensions)
    or from the rows of an array observation (the array path); ``reset``/``step`` return
    :meth:`batch`, a copy, so a caller that keeps it never sees it change.

    Example (the rows of a two-env Jetbot world, as its vector env keeps them)::

        import gymnasium as gym
        import internutopia.envs  # noqa: F401 (registers the ids)

        env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2).unwrapped
        rows = ObservationRows(env.layout, 'flat', env.vec_env.get_observations())
        assert rows.single(1).shape == env.single_observation_space.shape
        env.close()
    """

    def __init__(self, layout: ObsLayout, mode: str, slot_obs: Sequence[dict]) -> None:
        self.layout = layout
        self.mode = mode
        #: The rows themselves (an array, or a dict of arrays keyed by the layout's keys).
        self.rows: Any = self._from_dicts(slot_obs)

    def _from_dicts(self, slot_obs: Sequence[dict]) -> Any:
        return self.layout.flat(slot_obs) if self.mode == 'flat' else self.layout.dict(slot_obs)

    def set_from_dicts(self, slots: list[int], slot_obs: Sequence[dict]) -> None:
        """Replace the rows of ``slots`` with those of their per-slot observation dicts."""
        if not slots:
            return
        new = self._from_dicts(slot_obs)
        if self.mode == 'flat':
            self.rows[slots] = new
        else:
            for key, value in new.items():
                self.rows[key][slots] = value

    def write(self, tree: dict[str, Any], rows: np.ndarray) -> None:
        """Copy the rows ``rows`` of an array observation ``tree`` into these rows."""
        if self.mode == 'flat':
            self.layout.flat_rows(tree, rows, self.rows)
        else:
            self.layout.dict_rows(tree, rows, self.rows)

    def write_started(self, rows: np.ndarray, tree: dict[str, Any]) -> None:
        """:meth:`write` for ``rows`` whose episodes just started: a new episode whose observation
        does not fit the spaces is a ``ValueError`` naming its envs."""
        try:
            self.write(tree, rows)
        except (ValueError, KeyError, IndexError) as exc:
            raise ValueError(f'env(s) {rows.tolist()}: the new episode does not match the observation space ({exc})') from None

    def batch(self) -> Any:
        """A copy of every env's row."""
        if self.mode == 'flat':
            return self.rows.copy()
        return {key: value.copy() for key, value in self.rows.items()}

    def single(self, slot: int) -> Any:
        """A copy of the row of env ``slot``."""
        if self.mode == 'flat':
            return self.rows[slot].copy()
        return {key: np.array(value[slot]) for key, value in self.rows.items()}
