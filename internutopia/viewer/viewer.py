"""A live web viewer of a running env, for headless servers (``viser``: a browser draws it).

:func:`attach_viewer` starts a web server and wraps the env's ``reset``, ``step`` and
``step_arrays``, so the page follows the env as a script drives it: every slot on its grid cell,
its robots and objects moving. In the page's panel: **follow** keeps the camera on one slot,
**camera** shows the images of a robot's camera in the followed slot (or slot 0), and the status
line gives the env step and the slots running.

Each structure's bodies are drawn as instanced meshes (one mesh per body and colour, one instance
per slot holding that structure; :mod:`internutopia.viewer.geometry`), moved every update from the
bodies' poses (``Pack.body_poses``). Updates are limited to ``max_rate_hz`` per second of wall
time, so a fast env is slowed by about a millisecond per update, not per step::

    from internutopia.viewer import attach_viewer

    viewer = attach_viewer(env, port=8080)   # then open http://SERVER:8080
    env.reset()
    env.step(actions)                        # the page moves
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from internutopia.core.grid import slot_origins
from internutopia.viewer.geometry import body_meshes
from internutopia.viewer.key_input import ViewerKeys
from internutopia.viewer.server import check_address, start_server

__all__ = ['DEFAULT_PORT', 'Viewer', 'attach_viewer']

DEFAULT_PORT = 8080
#: Least wall time between two camera images sent to the page (s): the browser re-lays the panel
#: out for each, and faster updates keep it from ever drawing.
IMAGE_PERIOD_S = 0.5
#: The camera's offset from a followed slot's robot (m).
FOLLOW_OFFSET = np.array([-2.5, -2.5, 2.0])


@dataclass
class _PackNodes:
    """The scene nodes of one pack: one batched mesh per (body, colour), instances = the pack's slots."""

    slots: tuple[int, ...]
    handles: list[tuple[int, Any]] = field(default_factory=list)  # (body id, handle)


class Viewer:
    """The web viewer of one env (see the module doc); made by :func:`attach_viewer`.

    Args:
        env: a :class:`internutopia.core.vec_env.Env`.
        host: the address to listen on (``0.0.0.0``: every interface, for a remote browser).
        port: the port, 0-65535 (the next free one when it is taken, 0: any free one; :attr:`port`
            says which).
        max_rate_hz: the most updates per second of wall time.

    Raises:
        ViewerStartError: the server cannot start on ``host:port`` (see :func:`check_address`);
            the message names the host, the port and the cause.
    """

    def __init__(self, env: Any, host: str = '0.0.0.0', port: int = DEFAULT_PORT, max_rate_hz: float = 30.0) -> None:
        try:
            import viser
        except ImportError:
            raise ImportError("the viewer needs the 'viewer' extra: pip install 'internutopia[viewer]'") from None
        self.env = env
        self.server = start_server(viser, host, check_address(host, port))
        self.period = 1.0 / max_rate_hz if max_rate_hz > 0 else 0.0
        self.steps = 0
        self._last = -np.inf
        self._packs: dict[str, _PackNodes] = {}
        self._obs: list | None = None
        self._last_image = -np.inf
        env_num = env.env_num
        spacing = env.config.env_offset_size
        self.origins = slot_origins(env_num, spacing)
        scene = self.server.scene
        scene.set_up_direction('+z')
        for slot, origin in enumerate(self.origins):  # each slot's cell, seen from above
            scene.add_grid(f'/cells/{slot}', width=spacing * 0.98, height=spacing * 0.98, cell_size=spacing / 10,
                           position=tuple(origin), section_color=(140, 140, 140), cell_color=(200, 200, 200))
        gui = self.server.gui
        self.follow = gui.add_dropdown('follow', ['grid'] + [f'slot {i}' for i in range(env_num)], initial_value='grid')
        self.camera = gui.add_dropdown('camera', ['none'], initial_value='none')
        self.status = gui.add_markdown('')
        self.image = gui.add_image(np.zeros((48, 64, 3), dtype=np.uint8), label='camera image', format='jpeg')
        self.image.visible = False  # until a camera image arrives
        self._positions: dict[int, np.ndarray] = {}  # slot -> (nbody, 3) world positions of its bodies
        self.follow.on_update(lambda _: self._aim_all())
        self._aim_all()

    @property
    def port(self) -> int:
        """The port the page is served on."""
        return int(self.server.get_port())

    @property
    def url(self) -> str:
        return f'http://localhost:{self.port}'

    # -- the scene ---------------------------------------------------------------------------------
    def _sync_packs(self) -> list[tuple[Any, _PackNodes]]:
        """Scene nodes for every pack holding slots: made for a new pack or a pack whose slots changed."""
        world = self.env.runner.world
        live = [pack for pack in world.packs.values() if len(pack.slots)]
        keep = {pack.key for pack in live}
        for key in [k for k in self._packs if k not in keep]:
            for _, handle in self._packs.pop(key).handles:
                handle.remove()
        out = []
        for pack in live:
            slots = tuple(int(s) for s in pack.slots)
            nodes = self._packs.get(pack.key)
            if nodes is None or nodes.slots != slots:
                if nodes is not None:
                    for _, handle in nodes.handles:
                        handle.remove()
                nodes = self._packs[pack.key] = self._make_nodes(pack, slots)
            out.append((pack, nodes))
        return out

    def _make_nodes(self, pack: Any, slots: tuple[int, ...]) -> _PackNodes:
        nodes = _PackNodes(slots)
        count = len(slots)
        identity = np.tile([1.0, 0.0, 0.0, 0.0], (count, 1))
        for index, mesh in enumerate(body_meshes(pack.drawn_model)):
            handle = self.server.scene.add_batched_meshes_simple(
                f'/packs/{abs(hash(pack.key)) % 10 ** 8}/{index}', mesh.vertices, mesh.faces, batched_wxyzs=identity,
                batched_positions=self.origins[list(slots)], batched_colors=mesh.rgb,
                opacity=None if mesh.opacity >= 1.0 else mesh.opacity, lod='off', cast_shadow=False, receive_shadow=False)
            nodes.handles.append((mesh.body, handle))
        return nodes

    def update(self, obs: list | None = None, force: bool = False) -> bool:
        """Move the page to the env's current state (and show ``obs``' camera images); at most
        ``max_rate_hz`` times a second unless ``force``. Returns whether it updated."""
        if obs is not None:
            self._obs = obs
        now = time.perf_counter()
        if not force and now - self._last < self.period:
            return False
        self._last = now
        positions: dict[int, np.ndarray] = {}
        with self.server.atomic():
            for pack, nodes in self._sync_packs():
                poses = [pack.body_poses(slot) for slot in nodes.slots]
                xpos = np.stack([p for p, _ in poses]) + self.origins[list(nodes.slots)][:, None, :]
                xquat = np.stack([q for _, q in poses])
                for slot, row in zip(nodes.slots, xpos, strict=True):
                    positions[slot] = row
                for body, handle in nodes.handles:
                    handle.batched_positions = xpos[:, body]
                    handle.batched_wxyzs = xquat[:, body]
            self._positions = positions
            self._update_panel()
        self._aim_all()
        return True

    # -- the panel: status, camera images, following a slot ----------------------------------------------
    def _followed(self) -> int | None:
        value = self.follow.value
        return None if value == 'grid' else int(value.split()[1])

    def _update_panel(self) -> None:
        active = len(self.env.active_slots)
        self.status.content = f'env step {self.steps} · {active} of {self.env.env_num} slots running'
        slot = self._followed() or 0
        obs = self._obs[slot] if self._obs is not None and slot < len(self._obs) else None
        cameras = {}
        for robot, robot_obs in (obs or {}).items():
            sensors = robot_obs.get('sensors', {}) if isinstance(robot_obs, dict) else {}
            for name, reading in sensors.items():
                if isinstance(reading, dict):
                    image = reading.get('rgba', reading.get('rgb'))
                    if isinstance(image, np.ndarray) and image.ndim == 3:
                        cameras[f'{robot}/{name}'] = image
        options = ['none'] + sorted(cameras)
        if tuple(self.camera.options) != tuple(options):
            self.camera.options = options
            if self.camera.value == 'none' and len(options) > 1:
                self.camera.value = options[1]  # type: ignore[misc]  # (viser types the setter on the subclass only)
        image = cameras.get(self.camera.value)
        now = time.perf_counter()
        if image is not None and now - self._last_image >= IMAGE_PERIOD_S:
            self._last_image = now
            self.image.image = np.ascontiguousarray(image[..., :3])
            self.image.visible = True

    def _view(self) -> tuple[np.ndarray, np.ndarray]:
        """``(camera position, look-at point)``: the whole grid from above at an angle, or the
        followed slot's robot from behind and above."""
        slot = self._followed()
        if slot is None:
            low, high = self.origins.min(axis=0), self.origins.max(axis=0)
            centre = (low + high) / 2
            size = float((high - low).max()) + self.env.config.env_offset_size
            return centre + np.array([-0.9, -0.9, 1.0]) * size, centre
        positions = self._positions.get(slot)
        target = positions[1] if positions is not None and len(positions) > 1 else self.origins[slot]
        return target + FOLLOW_OFFSET, target

    def _aim_all(self, clients: bool = True) -> None:
        """Point new pages' cameras (and ``Reset View``) at the grid or the followed slot; when a
        slot is followed, move every open page's camera along with it."""
        position, look_at = self._view()
        self.server.initial_camera.position = tuple(position)
        self.server.initial_camera.look_at = tuple(look_at)
        if clients and self._followed() is not None:
            for client in self.server.get_clients().values():
                client.camera.look_at = tuple(look_at)
                client.camera.position = tuple(position)

    def key_input(self, label: str = 'keys') -> Any:
        """A **keys** field in this page's panel whose typed keys a script reads
        (:class:`~internutopia.viewer.key_input.ViewerKeys`; what
        ``KeyboardInteraction(viewer=...)`` uses)."""
        return ViewerKeys(self, label=label)

    def close(self) -> None:
        """Stop the web server."""
        self.server.stop()


def attach_viewer(env: Any, host: str = '0.0.0.0', port: int = DEFAULT_PORT, max_rate_hz: float = 30.0) -> Viewer:
    """Serve a live view of ``env`` at ``http://HOST:PORT`` and keep it current: the env's
    ``reset``, ``step`` and ``step_arrays`` are wrapped on this env object (its class is
    untouched), and its ``close`` stops the server too. Returns the :class:`Viewer`."""
    viewer = Viewer(env, host=host, port=port, max_rate_hz=max_rate_hz)
    reset, step, step_arrays, close = env.reset, env.step, env.step_arrays, env.close

    def viewed_reset(*args: Any, **kwargs: Any) -> Any:
        out = reset(*args, **kwargs)
        viewer.update(force=True)
        return out

    def viewed_step(*args: Any, **kwargs: Any) -> Any:
        out = step(*args, **kwargs)
        viewer.steps += 1
        viewer.update(out[0])
        return out

    def viewed_step_arrays(*args: Any, **kwargs: Any) -> Any:
        out = step_arrays(*args, **kwargs)
        viewer.steps += 1
        viewer.update()
        return out

    def viewed_close() -> Any:
        viewer.close()
        return close()

    env.reset, env.step, env.step_arrays, env.close = viewed_reset, viewed_step, viewed_step_arrays, viewed_close
    if env.runner.world.built:  # attached after the first reset: show the state now
        viewer.update(force=True)
    return viewer
