"""A live web viewer of a running env, for headless servers (``viser``: a browser draws it).

:func:`attach_viewer` starts a web server and wraps the env's ``reset``, ``step`` and
``step_arrays``, so the page follows the env as a script drives it: every slot on its grid cell,
its robots and objects moving. In the page's panel: **follow** keeps the camera on one slot,
**camera** shows the images of a robot's camera in the followed slot (or slot 0), and the status
line gives the env step and the slots running.

Each structure's bodies are drawn as instanced meshes (one mesh per body and colour, one instance
per slot holding that structure; :mod:`internutopia.viewer.geometry`), moved every update from the
bodies' poses (``Pack.body_poses``). Updates are limited to ``max_rate_hz`` per second of wall
time, so a fast env is slowed by about a millisecond per update, not per step; an update the
limit held back is made once the limit allows (by a helper thread, between the env's calls), so
the page always comes to show where a script stopped::

    from internutopia.viewer import attach_viewer

    viewer = attach_viewer(env, port=8080)   # then open http://SERVER:8080
    env.reset()
    env.step(actions)                        # the page moves
"""

from __future__ import annotations

import threading
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
    root: str  # the scene node the meshes hang under (``/packs/<key>``)
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
        env_num, spacing = _grid_of(env)  # (checked before the server starts)
        if isinstance(max_rate_hz, bool) or not isinstance(max_rate_hz, (int, float)) or not max_rate_hz >= 0:
            raise ValueError(f'max_rate_hz must be a number >= 0 (0: no limit); got {max_rate_hz!r}')
        self.host = host
        self.server = start_server(viser, host, check_address(host, port))
        try:
            self._build(env_num, spacing, max_rate_hz)
        except BaseException:  # (a viewer that failed to come up leaves no server behind)
            self.server.stop()
            raise

    def _build(self, env_num: int, spacing: float, max_rate_hz: float) -> None:
        """The page's scene and panel, and the thread that makes held-back updates."""
        self.period = 1.0 / max_rate_hz if max_rate_hz > 0 else 0.0
        self.closed = False
        #: Held over every wrapped env call and every update: the helper thread's updates come
        #: between the env's calls, never while one changes the world.
        self.lock = threading.RLock()
        self._held_back = threading.Event()  # an update the rate limit held back is due
        self._stopping = threading.Event()
        self._unwrap: list[tuple[str, Any, Any, bool]] = []  # (env method, wrapper, original, the env had its own)
        #: The names of the page's pose handles (:class:`~internutopia.viewer.pose_handle.PoseHandle`), one each.
        self.handle_names: set[str] = set()
        self.steps = 0
        self._last = -np.inf
        self._packs: dict[str, _PackNodes] = {}
        self._obs: list | None = None
        self._last_image = -np.inf
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
        self._aimed: tuple[tuple[float, ...], tuple[float, ...]] | None = None  # the last view aimed at
        self.follow.on_update(lambda _: self._aim_all())
        self._aim_all()
        self._trailer = threading.Thread(target=self._make_held_back_updates, name='internutopia-viewer-updates', daemon=True)
        self._trailer.start()

    @property
    def port(self) -> int:
        """The port the page is served on."""
        return int(self.server.get_port())

    @property
    def url(self) -> str:
        """The page's address: on ``host``, or on ``localhost`` where the server listens on every
        interface (``0.0.0.0``, ``::``)."""
        host = 'localhost' if self.host in ('', '0.0.0.0', '::') else self.host
        return f'http://[{host}]:{self.port}' if ':' in host else f'http://{host}:{self.port}'

    # -- the scene ---------------------------------------------------------------------------------
    def _sync_packs(self) -> list[tuple[Any, _PackNodes]]:
        """Scene nodes for every pack holding slots: made for a new pack or a pack whose slots changed."""
        world = self.env.runner.world
        live = [pack for pack in world.packs.values() if len(pack.slots)]
        keep = {pack.key for pack in live}
        for key in [k for k in self._packs if k not in keep]:
            self._drop(self._packs.pop(key))
        out = []
        for pack in live:
            slots = tuple(int(s) for s in pack.slots)
            nodes = self._packs.get(pack.key)
            if nodes is None or nodes.slots != slots:
                if nodes is not None:
                    self._drop(nodes)
                nodes = self._packs[pack.key] = self._make_nodes(pack, slots)
            out.append((pack, nodes))
        return out

    def _drop(self, nodes: _PackNodes) -> None:
        """Take a pack's meshes off the page, and the node they hung under (the page makes it with
        the first mesh, and would keep it, empty, after its meshes are gone)."""
        for _, handle in nodes.handles:
            handle.remove()
        self.server.scene.remove_by_name(nodes.root)

    def _make_nodes(self, pack: Any, slots: tuple[int, ...]) -> _PackNodes:
        nodes = _PackNodes(slots, f'/packs/{abs(hash(pack.key)) % 10 ** 8}')
        count = len(slots)
        identity = np.tile([1.0, 0.0, 0.0, 0.0], (count, 1))
        for index, mesh in enumerate(body_meshes(pack.drawn_model)):
            handle = self.server.scene.add_batched_meshes_simple(
                f'{nodes.root}/{index}', mesh.vertices, mesh.faces, batched_wxyzs=identity,
                batched_positions=self.origins[list(slots)], batched_colors=mesh.rgb,
                opacity=None if mesh.opacity >= 1.0 else mesh.opacity, lod='off', cast_shadow=False, receive_shadow=False)
            nodes.handles.append((mesh.body, handle))
        return nodes

    def update(self, obs: list | None = None, force: bool = False) -> bool:
        """Move the page to the env's current state (and show ``obs``' camera images); at most
        ``max_rate_hz`` times a second unless ``force`` (an update held back is made when the
        limit allows). Returns whether it updated now; after :meth:`close`, nothing happens."""
        with self.lock:
            if self.closed:
                return False
            if obs is not None:
                self._obs = obs
            now = time.perf_counter()
            if not force and now - self._last < self.period:
                self._held_back.set()
                return False
            self._held_back.clear()
            self._last = now
            self._draw()
            return True

    def _make_held_back_updates(self) -> None:
        """The helper thread: an update the rate limit held back, made once the limit allows and
        no wrapped env call runs (so a page shows where a script stopped stepping)."""
        while not self._stopping.is_set():
            self._held_back.wait()
            delay = self._last + self.period - time.perf_counter()
            if self._stopping.wait(max(delay, 0.0)):
                return
            with self.lock:  # (waits for a wrapped env call to return; that call may have updated already)
                if self._held_back.is_set():
                    try:
                        self.update()  # (held back again if an update came meanwhile: the loop waits anew)
                    except Exception:  # noqa: BLE001 - the env's next call updates (and raises) in the script's thread
                        self._held_back.clear()

    def _draw(self) -> None:
        """Move the page's scene and panel to the env's current state."""
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
        aim = (tuple(position.tolist()), tuple(look_at.tolist()))
        if aim == self._aimed:
            return  # (unchanged: a camera the script set itself stays as it set it)
        self._aimed = aim
        self.server.initial_camera.position = aim[0]
        self.server.initial_camera.look_at = aim[1]
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
        """Stop the web server and the updates: the env's methods are its own again (those
        :func:`attach_viewer` wrapped; where another viewer wrapped them since, this one's wrapper
        passes the calls through). Closing twice does nothing."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self._stopping.set()
            self._held_back.set()  # (wakes the helper thread, which then ends)
            for name, wrapper, original, had_own in self._unwrap:
                if vars(self.env).get(name) is wrapper:
                    if had_own:
                        setattr(self.env, name, original)
                    else:
                        delattr(self.env, name)  # (the class's method again)
            self._unwrap.clear()
        if self._trailer is not threading.current_thread():
            self._trailer.join(timeout=5.0)
        self.server.stop()


def _grid_of(env: Any) -> tuple[int, float]:
    """``(env_num, env_offset_size)`` of an open env, or a ``ValueError`` saying what ``env`` lacks."""
    if getattr(env, 'is_remote', False):
        raise ValueError(f'attach_viewer draws a world of this process; the slots of a {type(env).__name__} run in '
                         "Ray's processes (draw one runner's world with env.render(runner_id=...))")
    for attribute in ('env_num', 'config'):
        if not hasattr(env, attribute):
            raise ValueError(f'attach_viewer needs an internutopia.core.vec_env.Env; got {type(env).__name__} '
                             f'(no {attribute!r})')
    app = getattr(env, 'simulation_app', None)
    if app is not None and not app.is_running():
        raise ValueError('attach_viewer: this Env is closed')
    return int(env.env_num), float(env.config.env_offset_size)


#: The env methods :func:`attach_viewer` wraps: the page is updated after each.
_FOLLOWED = ('reset', 'reset_arrays', 'step', 'step_arrays', 'warm_up')


def attach_viewer(env: Any, host: str = '0.0.0.0', port: int = DEFAULT_PORT, max_rate_hz: float = 30.0) -> Viewer:
    """Serve a live view of ``env`` at ``http://HOST:PORT`` and keep it current: the env's
    ``reset``, ``reset_arrays``, ``step``, ``step_arrays`` and ``warm_up`` are wrapped on this
    env object (its class is untouched; :meth:`Viewer.close` puts them back), and its ``close``
    stops the server too. Returns the :class:`Viewer`.

    Raises:
        ValueError: ``env`` is not an open env, or ``max_rate_hz`` is not a number >= 0.
        ViewerStartError: the server cannot start (see :func:`~internutopia.viewer.server.check_address`).
    """
    _grid_of(env)  # (a distributed or closed env: said first)
    for attribute in ('runner', 'reset', 'step', 'close'):  # (what the page follows; checked before the server starts)
        if not hasattr(env, attribute):
            raise ValueError(f'attach_viewer needs an internutopia.core.vec_env.Env; got {type(env).__name__} '
                             f'(no {attribute!r})')
    viewer = Viewer(env, host=host, port=port, max_rate_hz=max_rate_hz)

    def follow(name: str) -> Any:
        original = getattr(env, name)
        steps = name.startswith('step')

        def viewed(*args: Any, **kwargs: Any) -> Any:
            if viewer.closed:
                return original(*args, **kwargs)
            with viewer.lock:  # (the viewer's helper thread draws only between calls)
                out = original(*args, **kwargs)
                if steps:
                    viewer.steps += 1
                viewer.update(out[0] if name == 'step' else None, force=not steps)
                return out

        viewed.__doc__, viewed.__wrapped__ = original.__doc__, original  # type: ignore[attr-defined]
        viewer._unwrap.append((name, viewed, original, name in vars(env)))
        return viewed

    wrapped = {name: follow(name) for name in _FOLLOWED if hasattr(env, name)}
    close = env.close

    def viewed_close() -> Any:
        viewer.close()
        return close()

    viewer._unwrap.append(('close', viewed_close, close, 'close' in vars(env)))
    for name, viewed in {**wrapped, 'close': viewed_close}.items():
        setattr(env, name, viewed)
    if env.runner.world.built:  # attached after the first reset: show the state now
        viewer.update(force=True)
    return viewer
