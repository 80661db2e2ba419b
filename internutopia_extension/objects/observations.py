"""Object observations for tasks: ``obs[i]['objects'] = {name: {'position', 'orientation', ...}}``.

Mix :class:`ObjectObservationsMixin` into a task and merge :meth:`object_observations` into its
``get_observations``. Positions are env-local, orientations wxyz; dynamic objects (free root
body) add ``linear_velocity`` (world axes, m/s) and ``angular_velocity`` (body axes, rad/s).
Work is per object group (numpy over all its slots); only the per-slot dicts are built per slot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from internutopia.core.view import EnvView


class ObjectObservationsMixin:
    """For :class:`~internutopia.core.task.base.BaseTask` subclasses (uses ``self.view``, an :class:`~internutopia.core.view.EnvView`)."""

    view: EnvView

    def object_observations(self, slots: np.ndarray) -> dict[str, list[dict[str, Any]]]:
        """``{'objects': [per-slot {name: obs}]}`` for ``slots``; every slot gets a dict (maybe empty).

        The value is a list (one dict per slot) rather than nested arrays, because slots of one task
        may hold different objects; the env splits it row by row. Nothing when the caller of the
        observation does not read ``objects`` (:attr:`EnvView.observed_entries
        <internutopia.core.view.EnvView>`): the per-slot dicts are most of a task's observation cost.
        """
        entries = getattr(self.view, 'observed_entries', None)
        if entries is not None and 'objects' not in entries:
            return {}
        return {'objects': self.view.object_observations(slots)}
