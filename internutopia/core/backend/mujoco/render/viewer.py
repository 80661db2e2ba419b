"""The interactive viewer: MuJoCo's passive viewer on one slot, synced every step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from internutopia.core.backend.mujoco.visuals import DrawnState

if TYPE_CHECKING:
    from internutopia.core.backend.mujoco.world import MujocoWorld


class PassiveViewer:
    """``mujoco.viewer.launch_passive`` on slot 0 of the world, synced each step.

    Opening is lazy (the world has no model before the first reset); it relaunches when slot 0
    changes structure; a closed window stays closed. Each slot is its own simulation, so the
    window shows one slot; :func:`render_overview` draws the whole grid. It draws the slot's
    pack from its drawn model (:class:`~internutopia.core.backend.mujoco.visuals.DrawnState`), so the
    physics model leaves its looks out in a world with a window too.
    """

    def __init__(self, world: MujocoWorld, slot: int = 0) -> None:
        self.world = world
        self.slot = slot
        self.handle: Any = None
        #: The slot's state posed in its pack's drawn model (what the window shows), and that pack's model.
        self._state: DrawnState | None = None
        self._model: Any = None
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

            self._model, self._state = pack.model, DrawnState(pack)
            self._state.load(self.slot)
            self.handle = mujoco.viewer.launch_passive(self._state.model, self._state.data, show_left_ui=False,
                                                       show_right_ui=False)
        assert self._state is not None
        with self.handle.lock():
            self._state.load(self.slot)
        self.handle.sync()

    def close(self) -> None:
        """Close the window (idempotent)."""
        if self.handle is not None:
            try:
                self.handle.close()
            finally:
                self.handle = None
                self._model = self._state = None



__all__ = ['PassiveViewer']
