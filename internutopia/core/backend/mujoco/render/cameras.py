"""Robot camera frames, batched: the frames of one step are tiled into one offscreen buffer.

A :class:`CameraRenderer` draws the frames of every robot camera of one pack that share an image
size and multisampling. A batch of :class:`FrameRequest` is drawn into the tiles of one large
buffer (one ``mjr_render`` per frame, each into its own viewport) and read back in one
``mjr_readPixels`` call, instead of one buffer round trip (render, wait, read) per frame: Mesa's
rasterizer threads then work on many frames at once, and the per-read cost is paid once.

With ``threads > 1`` the batch is split between that many render workers, each with its own GL
context, buffer and scratch ``MjData`` (the first on the calling thread, the others on threads of
their own), so scene building, vertex work and read-back of different frames overlap.
"""

from __future__ import annotations

import math
import os
import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render.context import RenderContext, depth_from_buffer, opaque_copy, tile_rect, warm_kernels
from internutopia.core.backend.mujoco.render.scene import FrustumCulling, RenderModel, load_slot


def default_render_threads() -> int:
    """Render threads per camera image size when ``SimConfig.rendering_threads`` is ``None``: one
    per core (at most 8). Mesa's vertex work runs on the thread that draws, so a second thread
    keeps a second core busy while the first waits for its frames' rasterization."""
    return max(1, min(os.cpu_count() or 1, 8))


#: Tiles drawn between two flushes: a flush hands the tiles drawn so far to Mesa's rasterizer
#: threads, which then work while this thread builds the next tiles' scenes.
FLUSH_EVERY = 4
#: Most pixels of one worker's tiled buffer (colour and depth together are 8 bytes a pixel);
#: a larger batch is drawn in rounds.
MAX_BUFFER_PIXELS = 1 << 22


@dataclass
class FrameRequest:
    """One frame of fixed camera ``cam`` (a camera id of the pack's model) in ``slot``.

    ``rgb`` (``(H, W, 3)`` or ``(H, W, 4)`` uint8; alpha is set to 255) and ``depth``
    (``(H, W)`` float32, metres along the optical axis) receive the image; either may be ``None``
    (a frame with no ``rgb`` is drawn without colour work). ``near``/``far`` clip the view (m).
    ``mount``, when given, is ``(position (3,), wxyz quaternion (4,))`` of the camera relative to
    its body, replacing the model's for this frame (a camera moved in one slot).
    After rendering, ``position`` and ``xmat`` hold the camera's pose in the slot frame.
    """

    slot: int
    cam: int
    rgb: np.ndarray | None
    depth: np.ndarray | None
    near: float = 0.01
    far: float = 1000.0
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    xmat: np.ndarray = field(default_factory=lambda: np.zeros(9))
    mount: tuple[np.ndarray, np.ndarray] | None = None


def atlas_shape(tiles: int, width: int, height: int) -> tuple[int, int]:
    """``(columns, rows)`` of a near-square (in pixels) grid of at least ``tiles`` tiles of
    ``width`` x ``height``, within :data:`MAX_BUFFER_PIXELS` (fewer tiles when it would not fit)."""
    limit = max(1, MAX_BUFFER_PIXELS // (width * height))
    tiles = max(1, min(int(tiles), limit))
    columns = max(1, min(tiles, round(math.sqrt(tiles * height / width))))
    rows = math.ceil(tiles / columns)
    return columns, rows


class _Worker:
    """One render worker: a GL context with a tiled buffer, a scratch ``MjData`` and read buffers."""

    def __init__(self, owner: CameraRenderer, tiles: int) -> None:
        self.owner = owner
        width, height = owner.frame_size
        self.columns, self.rows = atlas_shape(tiles, width, height)
        self.context = RenderContext(owner.render_model, self.columns * width, self.rows * height, owner.samples)
        self.data = mujoco.MjData(owner.pack.model)
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self.rgba = np.empty((self.rows * height, self.columns * width, 4), dtype=np.uint8)
        self.depth = np.empty((self.rows * height, self.columns * width), dtype=np.float32)
        self.flush = _gl_flush()

    @property
    def capacity(self) -> int:
        return self.columns * self.rows

    def grow(self, tiles: int) -> None:
        """Make room for ``tiles`` tiles in one round (within the pixel limit)."""
        width, height = self.owner.frame_size
        columns, rows = atlas_shape(tiles, width, height)
        if columns * rows <= self.capacity:
            return
        self.context.make_current()
        mujoco.mjr_resizeOffscreen(columns * width, rows * height, self.context.mjr)
        self.columns, self.rows = columns, rows
        self.rgba = np.empty((rows * height, columns * width, 4), dtype=np.uint8)
        self.depth = np.empty((rows * height, columns * width), dtype=np.float32)

    def render(self, requests: list[FrameRequest]) -> None:
        self.grow(len(requests))
        self.context.make_current()
        for start in range(0, len(requests), self.capacity):
            self._round(requests[start:start + self.capacity])

    def _round(self, requests: list[FrameRequest]) -> None:
        owner, context, data, camera = self.owner, self.context, self.data, self.camera
        width, height = owner.frame_size
        aspect = width / height
        culling = owner.culling
        pack = owner.pack
        for index, request in enumerate(requests):
            cam = request.cam
            load_slot(pack, request.slot, data)
            if request.mount is not None:
                place_camera(pack.model, data, cam, *request.mount)
            request.position[:] = data.cam_xpos[cam]
            request.xmat[:] = data.cam_xmat[cam]
            camera.fixedcamid = cam
            groups = culling.camera_groups(cam, data, aspect, request.near, request.far)
            context.update_scene(data, camera, groups=groups, eye=data.cam_xpos[cam])
            context.set_clip(request.near, request.far)
            context.draw(tile_rect(index, self.columns, width, height), single_pass=True, flat=request.rgb is None)
            if self.flush is not None and index % FLUSH_EVERY == FLUSH_EVERY - 1:
                self.flush()
        rows = math.ceil(len(requests) / self.columns)
        want_rgb = any(r.rgb is not None for r in requests)
        want_depth = any(r.depth is not None for r in requests)
        rect = mujoco.MjrRect(0, 0, self.columns * width, rows * height)
        context.read(rect, self.rgba[:rows * height] if want_rgb else None, self.depth[:rows * height] if want_depth else None)
        for index, request in enumerate(requests):
            row, column = divmod(index, self.columns)
            window = (slice(row * height, (row + 1) * height), slice(column * width, (column + 1) * width))
            if request.rgb is not None:
                opaque_copy(self.rgba[window][::-1], request.rgb)
            if request.depth is not None:
                depth_from_buffer(self.depth[window], request.near, request.far, request.depth)

    def free(self) -> None:
        self.context.free()


def place_camera(model: mujoco.MjModel, data: mujoco.MjData, cam: int, position: np.ndarray, quat: np.ndarray) -> None:
    """Set camera ``cam``'s pose in ``data`` from a pose relative to its body (``data``'s
    kinematics computed), as if the model's camera were there."""
    body = int(model.cam_bodyid[cam])
    world_pos, world_quat = np.zeros(3), np.zeros(4)
    mujoco.mju_rotVecQuat(world_pos, np.asarray(position, dtype=float), data.xquat[body])
    mujoco.mju_mulQuat(world_quat, data.xquat[body], np.asarray(quat, dtype=float))
    data.cam_xpos[cam] = data.xpos[body] + world_pos
    mujoco.mju_quat2Mat(data.cam_xmat[cam], world_quat)


def _gl_flush() -> Callable[[], Any] | None:
    """``glFlush`` (PyOpenGL, which MuJoCo's GL backends bring); ``None`` when it does not load."""
    try:
        from OpenGL import GL

        return GL.glFlush
    except Exception:  # noqa: BLE001 - only a missed overlap: frames are still drawn and read right
        return None


class _Thread:
    """A thread that owns one worker (its GL context is current there only)."""

    def __init__(self) -> None:
        self.tasks: queue.Queue[tuple[Callable[[], Any], threading.Event, list] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name='internutopia-render', daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            task = self.tasks.get()
            if task is None:
                return
            function, done, result = task
            try:
                result.append(function())
            except BaseException as error:  # noqa: BLE001 - handed to the caller, who re-raises it
                result.append(error)
            done.set()

    def submit(self, function: Callable[[], Any]) -> tuple[threading.Event, list]:
        done, result = threading.Event(), []
        self.tasks.put((function, done, result))
        return done, result

    def call(self, function: Callable[[], Any]) -> Any:
        done, result = self.submit(function)
        done.wait()
        return _unwrap(result)

    def stop(self) -> None:
        self.tasks.put(None)
        self.thread.join(timeout=10)


def _unwrap(result: list) -> Any:
    value = result[0]
    if isinstance(value, BaseException):
        raise value
    return value


class CameraRenderer:
    """The robot camera frames of one pack with one image size ``frame_size`` = ``(width, height)``
    and ``samples``-fold multisampling, drawn by ``threads`` workers into tiled buffers."""

    def __init__(self, pack: Any, render_model: RenderModel, width: int, height: int, samples: int = 0,
                 threads: int = 1) -> None:
        if threads < 1:
            raise ValueError(f'render threads must be >= 1; got {threads}')
        # Weak: the pack's rendering state must not keep a pack the world dropped alive.
        self._pack = weakref.ref(pack)
        self.render_model = render_model
        self.frame_size = (int(width), int(height))
        self.samples = int(samples)
        self.threads = int(threads)
        self.culling = FrustumCulling(render_model.model, render_model.option)
        warm_kernels()  # compile (or load) once, here, rather than in several render threads at once
        self._workers: list[_Worker | None] = [None] * self.threads
        self._threads: list[_Thread | None] = [None] * self.threads
        #: Frames drawn so far (for tests and benchmarks).
        self.frames = 0

    @property
    def pack(self) -> Any:
        """The pack whose slots this renderer draws."""
        pack = self._pack()
        if pack is None:
            raise RuntimeError('nothing to render: this pack of the world is gone')
        return pack

    @property
    def contexts(self) -> list[RenderContext]:
        """The live render contexts (one per worker that has drawn)."""
        return [worker.context for worker in self._workers if worker is not None]

    def _work(self, index: int, requests: list[FrameRequest], tiles: int) -> None:
        worker = self._workers[index]
        if worker is None:
            worker = self._workers[index] = _Worker(self, tiles)
        worker.render(requests)

    def render(self, requests: list[FrameRequest]) -> None:
        """Draw ``requests`` and write their images and poses."""
        if not requests:
            return
        count = min(self.threads, len(requests))
        bounds = np.linspace(0, len(requests), count + 1).round().astype(int)
        chunks = [requests[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        # Size each buffer for the whole pack's frames, so later batches fit in one round.
        tiles = max(len(chunks[0]), math.ceil(len(self.pack.slots) / count))
        pending = []
        for index in range(1, count):
            if self._threads[index] is None:
                self._threads[index] = _Thread()
            pending.append(self._threads[index].submit(lambda i=index, c=chunks[index]: self._work(i, c, tiles)))
        self._work(0, chunks[0], tiles)
        for done, _ in pending:
            done.wait()
        for _, result in pending:
            _unwrap(result)
        self.frames += len(requests)

    def free(self) -> None:
        """Release every worker's GL context and stop the render threads (idempotent)."""
        workers, self._workers = self._workers, [None] * self.threads
        threads, self._threads = self._threads, [None] * self.threads
        for index, worker in enumerate(workers):
            if worker is None:
                continue
            thread = threads[index]
            if thread is not None:
                thread.call(worker.free)
            else:
                worker.free()
        for thread in threads:
            if thread is not None:
                thread.stop()


__all__ = ['MAX_BUFFER_PIXELS', 'CameraRenderer', 'FrameRequest', 'atlas_shape', 'default_render_threads']
