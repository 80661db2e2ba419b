"""The interactive viewer: MuJoCo's passive viewer on one slot, synced every step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mujoco

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import MujocoWorld


class PassiveViewer:
    """``mujoco.viewer.launch_passive`` on slot 0 of the world, synced each step.

    Opening is lazy (the world has no model before the first reset); it relaunches when slot 0
    changes structure; a closed window stays closed. Each slot is its own simulation, so the
    window shows one slot; :func:`render_overview` draws the whole grid.
    """

    def __init__(self, world: MujocoWorld, slot: int = 0) -> None:
        self.world = world
        self.slot = slot
        self.handle: Any = None
        self._model: mujoco.MjModel | None = None
        self._data: mujoco.MjData | None = None
        self._user_closed = False

    def sync(self) -> None:
        """Show the slot's current state; (re)launch when its model changed."""
        pack = self.world.pack(self.slot)
        if self._user_closed or pack is None:
            return
        if self.handle is not None and not self.handle.is_running():
            self.handle = None
            self._user_closed = True
            return
        if self.handle is not None and pack.model is not self._model:
            self.close()
        if self.handle is None:
            import mujoco.viewer

            self._model, self._data = pack.model, mujoco.MjData(pack.model)
            pack.batch.get_data(self.slot, self._data)
            self.handle = mujoco.viewer.launch_passive(self._model, self._data, show_left_ui=False, show_right_ui=False)
        with self.handle.lock():
            pack.batch.get_data(self.slot, self._data)
        self.handle.sync()

    def close(self) -> None:
        """Close the window (idempotent)."""
        if self.handle is not None:
            try:
                self.handle.close()
            finally:
                self.handle = None
                self._model = self._data = None



__all__ = ['PassiveViewer']
