"""Robot camera frames, batched: the frames of one step are drawn before any is read back.

A :class:`CameraRenderer` draws the frames of every robot camera of one pack that share an image
size and multisampling. Each :class:`FrameRequest` of a batch is drawn into a framebuffer of its
own (:mod:`.framebuffers`; one ``mjr_render`` per frame) and the frames are read back after the
last one is drawn, instead of one round trip (render, wait, read) per frame: Mesa's rasterizer
threads then work on many frames at once, and the batch waits for them once.

With ``threads > 1`` the batch is split between that many render workers, each with its own GL
context, framebuffers and scratch ``MjData`` (the first on the calling thread, the others on threads of
their own), so scene building, vertex work and read-back of different frames overlap.
"""

from __future__ import annotations

import functools
import math
import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render.context import (
    RenderContext,
    depth_from_buffer,
    scene_index_image,
    warm_kernels,
)
from internutopia.core.backend.mujoco.render.coverage import COVERAGE_BITS, hidden_pixels, shown_pixels, warm_coverage_kernels
from internutopia.core.backend.mujoco.render.framebuffers import FrameBuffers
from internutopia.core.backend.mujoco.render.gl import prepare_screens
from internutopia.core.backend.mujoco.render.scene import (
    HIDDEN_GROUP,
    FrustumCulling,
    RenderModel,
    occludable_geoms,
)
from internutopia.core.backend.mujoco.render.sections import render_section
from internutopia.core.backend.mujoco.visuals import DrawnState
from internutopia.core.util.cpus import usable_cpus


def default_render_threads() -> int:
    """Render threads per camera image size when ``SimConfig.rendering_threads`` is ``None``: one
    per core this process may use (:func:`~internutopia.core.util.cpus.usable_cpus`), at most 8.
    Mesa's vertex work runs on the thread that draws, so a second thread keeps a second core busy
    while the first waits for its frames' rasterization."""
    return max(1, min(usable_cpus(), 8))


#: Seconds a render waits for another render thread's share of the frames (or for a thread to
#: release its GL context) before it gives up: a GL driver that hangs ends the call with an error
#: instead of wedging the env. (A batch of many large frames takes seconds on Mesa's CPU rasterizer.)
RENDER_WAIT_S = 300.0

#: Frames drawn between two flushes: a flush hands the frames drawn so far to Mesa's rasterizer
#: threads, which then work while this thread builds the next frames' scenes.
FLUSH_EVERY = 4
_GEOM = int(mujoco.mjtObj.mjOBJ_GEOM)
#: Most pixels of one worker's framebuffers together (colour and depth take 8 bytes a pixel,
#: more with multisampling); a larger batch is drawn in rounds.
MAX_BUFFER_PIXELS = 1 << 22


@dataclass
class FrameRequest:
    """One frame of fixed camera ``cam`` (a camera id of the pack's model) in ``slot``.

    ``rgb`` (``(H, W, 3)`` or ``(H, W, 4)`` uint8; alpha is set to 255) and ``depth``
    (``(H, W)`` float32, metres along the optical axis) receive the image; either may be ``None``
    (a frame with no ``rgb`` is drawn without colour work). ``near``/``far`` clip the view (m).
    ``mount``, when given, is ``(position (3,), wxyz quaternion (4,))`` of the camera relative to
    its body, replacing the model's for this frame (a camera moved in one slot).
    ``segmentation`` (``(H, W)`` int32) receives the model geom id drawn at each pixel (-1: none):
    an id-coloured pass of the frame's scene (with no ``rgb``, that pass gives the depth too, so
    such a frame is drawn once). With ``geom_instances`` (``(ngeom,)`` int, the thing each geom
    belongs to, 0 for none), ``alone_pixels`` is set to the pixels each such thing that is in
    view covers when drawn alone (``(things + 1,)`` int64; an id-coloured pass per thing in view,
    for occlusion ratios: one coverage pass draws up to :data:`COVERAGE_BITS` of them at once).
    ``view``, when given, is ``(position (3,), xmat (9,), fovy_deg)``: a pinhole view in the slot
    frame (looking along its -z, +y up) drawn instead of camera ``cam`` (a camera made at run time).
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
    segmentation: np.ndarray | None = None
    geom_instances: np.ndarray | None = None
    alone_pixels: np.ndarray | None = None
    view: tuple[np.ndarray, np.ndarray, float] | None = None


def batch_capacity(frames: int, width: int, height: int) -> int:
    """Frames one worker draws per round: ``frames``, fewer when their buffers would pass
    :data:`MAX_BUFFER_PIXELS` (a larger batch is drawn in rounds)."""
    return max(1, min(int(frames), MAX_BUFFER_PIXELS // (width * height)))


class _Worker:
    """One render worker: a GL context with a framebuffer per frame of a round, a scratch
    ``MjData`` and read buffers."""

    def __init__(self, owner: CameraRenderer, frames: int, index: int = 0) -> None:
        self.owner = owner
        width, height = owner.frame_size
        # Worker ``index`` on screen ``index``: on Mesa's CPU rasterizer, every other worker draws
        # through a rasterizer of its own (a second EGL display, see :mod:`.gl`).
        self.context = RenderContext(owner.render_model, width, height, owner.samples, screen=index)
        self.context.sample_nearest_mipmap()
        self.buffers = FrameBuffers(self.context.mjr, width, height, batch_capacity(frames, width, height))
        #: Single-sample framebuffers for the id-coloured passes of frames that also draw colour (made on first use).
        self.id_buffers: FrameBuffers | None = None
        #: Single-sample colour-only framebuffers for the coverage passes of things drawn alone (made on first use, grown as needed).
        self.alone_buffers: FrameBuffers | None = None
        self._alone_used = 0  # coverage buffers used in the current round
        #: The slot drawn now, posed in the pack's drawn model (this worker's own).
        self.state = DrawnState(owner.pack)
        self.data = self.state.data
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self.free_camera = mujoco.MjvCamera()  # for frames with a view of their own (set_view overrides it)
        self.rgba = np.empty((height, width, 4), dtype=np.uint8)
        self.depth = np.empty((height, width), dtype=np.float32)
        self.red = np.empty((height, width), dtype=np.uint8)
        self.rect = mujoco.MjrRect(0, 0, width, height)

    def _shared_ids(self, request: FrameRequest) -> bool:
        """Whether ``request``'s ids come from its one pass (no colour wanted, and single-sample
        buffers: resolving multisampled ids would blend them)."""
        return request.rgb is None and self.buffers.samples == 0

    def _second_pass(self, request: FrameRequest) -> bool:
        """Whether ``request`` is drawn a second time, single-sample (into :attr:`id_buffers`): for
        its ids beside colour, and for the depth of a multisampled frame (a multisampled depth
        buffer resolves to one sample's depth, off the pixel centre: a floor pixel near the horizon
        read several percent too near), which then comes from that pass with the ids."""
        if request.segmentation is not None:
            return not self._shared_ids(request)
        return request.depth is not None and self.buffers.samples > 0

    def render(self, requests: list[FrameRequest]) -> None:
        width, height = self.owner.frame_size
        capacity = batch_capacity(len(requests), width, height)
        with render_section():
            self.context.make_current()
            self.buffers.grow(capacity)
            if any(self._second_pass(r) for r in requests):
                if self.id_buffers is None:
                    self.id_buffers = FrameBuffers(self.context.mjr, width, height, capacity, samples=0)
                self.id_buffers.grow(capacity)
            try:
                for start in range(0, len(requests), capacity):
                    self._round(requests[start:start + capacity])
            finally:
                self.buffers.restore()

    def _round(self, requests: list[FrameRequest]) -> None:
        owner, context, data, camera, buffers = self.owner, self.context, self.data, self.camera, self.buffers
        width, height = owner.frame_size
        aspect = width / height
        culling = owner.culling
        scene_geoms: list[np.ndarray | None] = []
        fields: list[float] = []  # each frame's vertical field of view (for its sky)
        alone: list[tuple[int, list[tuple[np.ndarray, int]]]] = []  # (request index, its coverage passes) of the round
        self._alone_used = 0
        for index, request in enumerate(requests):
            cam = request.cam
            self.state.load(request.slot)
            if request.view is not None:
                position, xmat, fovy = request.view
                request.position[:] = position
                request.xmat[:] = xmat
                groups = culling.view_groups(data, request.position, request.xmat, fovy, aspect, request.near, request.far)
                context.update_scene(data, self.free_camera, groups=groups, eye=request.position)
                context.set_view(request.position, request.xmat, fovy, request.near, request.far)
            else:
                if request.mount is not None:
                    place_camera(self.state.model, data, cam, *request.mount)
                request.position[:] = data.cam_xpos[cam]
                request.xmat[:] = data.cam_xmat[cam]
                camera.fixedcamid = cam
                fovy = float(self.state.model.cam_fovy[cam])
                groups = culling.camera_groups(cam, data, aspect, request.near, request.far)
                context.update_scene(data, camera, groups=groups, eye=data.cam_xpos[cam])
                context.set_clip(request.near, request.far)
            ids = request.segmentation is not None
            shared = ids and self._shared_ids(request)
            second = self._second_pass(request)
            if request.rgb is not None or not second:
                buffers.bind(index)
                # A frame with no colour and ids: the id-coloured pass gives the depth as well.
                context.draw(self.rect, single_pass=True, flat=request.rgb is None, ids=shared)
            if second:
                assert self.id_buffers is not None
                self.id_buffers.bind(index)  # the same scene again, single-sample: ids, depth
                context.draw(self.rect, single_pass=True, flat=True, ids=ids)
            scene_geoms.append(context.scene_geoms() if ids else None)
            fields.append(fovy)
            if request.geom_instances is not None:
                self._draw_alone(index, request, groups, fovy, alone)
            if index % FLUSH_EVERY == FLUSH_EVERY - 1:
                buffers.flush()
        for index, request in enumerate(requests):
            ids = request.segmentation is not None
            shared = ids and self._shared_ids(request)
            second = self._second_pass(request)
            colour = request.rgb is not None
            depth_second = request.depth is not None and second and buffers.samples > 0  # (not the resolved one)
            if colour or not second:
                buffers.read(index, self.rgba if colour or shared else None,
                             self.depth if request.depth is not None and not depth_second else None)
            if request.rgb is not None:
                context.copy_colour(self.rgba, request.rgb, request.xmat, fields[index])
            if second:
                assert self.id_buffers is not None
                self.id_buffers.read(index, self.rgba if ids else None, self.depth if depth_second else None)
            if ids:
                geoms = scene_geoms[index]
                assert geoms is not None and request.segmentation is not None
                # Scene index -> model geom id; index -1 (nothing drawn) -> the appended -1.
                np.take(np.append(geoms, -1), scene_index_image(self.rgba[::-1]), out=request.segmentation, mode='wrap')
            if request.depth is not None:
                depth_from_buffer(self.depth, request.near, request.far, request.depth)
        for index, passes in alone:
            self._count_alone(requests[index], passes)

    def _count_alone(self, request: FrameRequest, passes: list[tuple[np.ndarray, int]]) -> None:
        """``request.alone_pixels``: the pixels each thing shows in the frame (its segmentation)
        plus, from its coverage passes (``(things, buffer)``), those where it is hidden."""
        pixels, owners, segmentation = request.alone_pixels, request.geom_instances, request.segmentation
        assert pixels is not None and owners is not None and segmentation is not None
        owners = np.asarray(owners)
        pixels[:] = shown_pixels(segmentation, owners, len(pixels))
        width, height = self.owner.frame_size
        for things, buffer in passes:
            assert self.alone_buffers is not None
            self.alone_buffers.read(buffer, self.rgba, None)
            pixels += hidden_pixels(segmentation, owners, self.rgba.view('<u4').reshape(height, width), things, len(pixels))

    def _draw_alone(self, index: int, request: FrameRequest, groups: np.ndarray, fovy: float,
                    alone: list[tuple[int, list[tuple[np.ndarray, int]]]]) -> None:
        """Draw what the things of ``request.geom_instances`` in view (``groups``: the frame's
        culled geom groups) may have hidden, for the pixels each covers drawn alone, and note the
        passes in ``alone`` (counted with the round's frames, :meth:`_count_alone`).

        A thing covers, drawn alone, the pixels it shows plus those where it is hidden, and it can
        only be hidden where one of its geoms that another thing's geom may hide is
        (:func:`~.scene.occludable_geoms`): only those geoms are drawn. Up to
        :data:`COVERAGE_BITS` things share one pass: each geom in the colour of its thing's bit
        (MuJoCo's id colour is a geom's ``segid`` + 1), into a buffer with no depth buffer (so no
        fragment is hidden) with the colours ORed: a pixel has the bit of every thing that covers it.
        """
        owners = np.asarray(request.geom_instances)
        request.alone_pixels = np.zeros(int(owners.max(initial=0)) + 1, dtype=np.int64)
        drawable = np.asarray(self.owner.render_model.option.geomgroup, dtype=bool)
        in_view = np.flatnonzero(drawable[np.clip(groups, 0, len(drawable) - 1)] & (groups != HIDDEN_GROUP))
        if request.segmentation is None or not (owners[in_view] > 0).any():
            return
        context, data = self.context, self.data
        may_hide = occludable_geoms(context.model, data, request.position, in_view, owners[in_view])
        drawn = in_view[may_hide & (owners[in_view] > 0)]
        things = np.unique(owners[drawn])
        passes: list[tuple[np.ndarray, int]] = []
        alone.append((index, passes))
        if not len(things):
            return
        width, height = self.owner.frame_size
        if self.alone_buffers is None:
            self.alone_buffers = FrameBuffers(self.context.mjr, width, height, 0, samples=0, depth=False)
        chunks = [things[start:start + COVERAGE_BITS] for start in range(0, len(things), COVERAGE_BITS)]
        camera = self.free_camera if request.view is not None else self.camera
        bit_of = np.zeros(len(request.alone_pixels), dtype=np.int64)
        only = np.full_like(groups, HIDDEN_GROUP)
        for chunk in chunks:
            bit_of[chunk] = np.arange(len(chunk))
            mine = drawn[np.isin(owners[drawn], chunk)]
            only[:] = HIDDEN_GROUP
            only[mine] = groups[mine]
            context.update_scene(data, camera, groups=only, eye=request.position)
            if request.view is not None:
                context.set_view(request.position, request.xmat, fovy, request.near, request.far)
            else:
                context.set_clip(request.near, request.far)
            scene = context.scene
            for geom in scene.geoms[:scene.ngeom]:
                # Decor that is no model geom gets colour 0, which adds nothing to the OR.
                geom.segid = (1 << int(bit_of[owners[geom.objid]])) - 1 if geom.objtype == _GEOM else -1
            buffer = self._next_alone_buffer()
            self.alone_buffers.bind(buffer)
            context.draw(self.rect, ids=True, merge=True)
            passes.append((chunk, buffer))

    def _next_alone_buffer(self) -> int:
        assert self.alone_buffers is not None
        self._alone_used += 1
        self.alone_buffers.grow(self._alone_used)
        return self._alone_used - 1

    def free(self) -> None:
        self.context.make_current()
        self.buffers.free()
        if self.alone_buffers is not None:
            self.alone_buffers.free()
        if self.id_buffers is not None:
            self.id_buffers.free()
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

    def submit(self, function: Callable[[], Any]) -> tuple[threading.Event, list[Any]]:
        done, result = threading.Event(), list[Any]()
        self.tasks.put((function, done, result))
        return done, result

    def call(self, function: Callable[[], Any]) -> Any:
        done, result = self.submit(function)
        if not done.wait(RENDER_WAIT_S):
            raise RuntimeError(f'a render thread did not finish a call within {RENDER_WAIT_S:g} s (a hung GL driver?)')
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
    and ``samples``-fold multisampling, drawn by ``threads`` workers, each into framebuffers of its own."""

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
        warm_coverage_kernels()
        self._workers: list[_Worker | None] = [None] * self.threads
        self._threads: list[_Thread | None] = [None] * self.threads
        #: Frames drawn so far (for tests and benchmarks).
        self.frames = 0
        #: Why this renderer draws no more (a render thread that never finished), else ``None``.
        self.broken: str | None = None
        self._stuck: set[int] = set()  # the render threads that never finished (left to themselves)

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

    def _work(self, index: int, requests: list[FrameRequest], frames: int) -> None:
        worker = self._workers[index]
        if worker is None:
            worker = self._workers[index] = _Worker(self, frames, index)
        worker.render(requests)

    def render(self, requests: list[FrameRequest]) -> None:
        """Draw ``requests`` and write their images and poses."""
        if not requests:
            return
        if self.broken is not None:  # (fail at once: each call would wait behind the stuck thread again)
            raise RuntimeError(self.broken)
        count = min(self.threads, len(requests))
        bounds = np.linspace(0, len(requests), count + 1).round().astype(int)
        chunks = [requests[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        # Make framebuffers for each worker's share of the whole pack's frames at once, so later batches fit in one round.
        frames = max(len(chunks[0]), math.ceil(len(self.pack.slots) / count))
        if count > 1 and self._threads[1] is None:  # the displays, before any worker draws on them
            prepare_screens(*self.frame_size, count)
        pending = []
        for index in range(1, count):
            thread = self._threads[index]
            if thread is None:
                thread = self._threads[index] = _Thread()
            pending.append(thread.submit(functools.partial(self._work, index, chunks[index], frames)))
        self._work(0, chunks[0], frames)
        for index, (done, _) in enumerate(pending, start=1):
            if not done.wait(RENDER_WAIT_S):
                self._stuck.add(index)
                self.broken = (f'render thread {index} of the {self.frame_size[0]}x{self.frame_size[1]} cameras did not finish '
                               f'its frames within {RENDER_WAIT_S:g} s (a hung GL driver?); these cameras draw no more frames')
                raise RuntimeError(self.broken)
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
            if index in self._stuck:
                continue  # (its GL context stays with it: freeing it would wait behind the stuck call)
            if thread is not None:
                thread.call(worker.free)
            else:
                worker.free()
        for index, thread in enumerate(threads):
            if thread is None:
                continue
            if index in self._stuck:
                thread.tasks.put(None)  # (it ends if its call ever returns; not waited for)
            else:
                thread.stop()


__all__ = ['MAX_BUFFER_PIXELS', 'CameraRenderer', 'FrameRequest', 'batch_capacity', 'default_render_threads']
