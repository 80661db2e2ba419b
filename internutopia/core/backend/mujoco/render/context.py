"""A GL context with its ``MjrContext``, scene and offscreen buffer, and MuJoCo depth to metres.

A :class:`RenderContext` draws scenes of one :class:`~.scene.RenderModel` into an offscreen buffer
of a fixed size and multisampling. The robot cameras draw the frames of a batch into framebuffers
of their own next to it (see :mod:`.cameras`); the overview uses the buffer itself.
"""

from __future__ import annotations

import math
import os

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.render.framebuffers import _gl
from internutopia.core.backend.mujoco.render.gl import new_gl_context, release_current
from internutopia.core.backend.mujoco.render.scene import RenderModel
from internutopia.core.backend.mujoco.render.sky import has_own_skybox, sky_composite, warm_sky_kernel
from internutopia.core.util.inherited import keep_forever
from internutopia.core.util.jit import Kernel

_FLAG_REFLECTION = int(mujoco.mjtRndFlag.mjRND_REFLECTION)
_FLAG_SHADOW = int(mujoco.mjtRndFlag.mjRND_SHADOW)
_FLAG_SEGMENT = int(mujoco.mjtRndFlag.mjRND_SEGMENT)
_FLAG_IDCOLOR = int(mujoco.mjtRndFlag.mjRND_IDCOLOR)
_FLAG_SKYBOX = int(mujoco.mjtRndFlag.mjRND_SKYBOX)
_GL_RGBA = 0x1908
#: A uint32 pixel with only the alpha byte set (whatever the byte order).
ALPHA_MASK = np.frombuffer(bytes([0, 0, 0, 255]), dtype=np.uint32)[0]


class RenderContext:
    """A GL context and an ``MjrContext`` whose offscreen buffer is ``width`` x ``height`` pixels
    with ``samples``-fold multisampling (anti-aliasing; 0: none), for one render model.

    The GL context is current on the thread that made it; a context used from another thread must
    be released there first (:meth:`release`). ``maxgeom`` is the scene's capacity. ``screen`` picks
    the EGL display (:func:`~.gl.new_gl_context`: render workers spread over Mesa's rasterizers).
    """

    def __init__(self, render_model: RenderModel, width: int, height: int, samples: int, maxgeom: int = 0,
                 screen: int = 0) -> None:
        self.render_model = render_model
        self._pid = os.getpid()  # (a context inherited through fork is never used: see .fork)
        self.size = (int(width), int(height))
        self.samples = int(samples)
        model = render_model.model
        with render_model.lock:  # the buffer size is read from the shared copy's vis settings
            vis = model.vis
            vis.global_.offwidth, vis.global_.offheight = self.size
            vis.quality.offsamples = self.samples
            self.gl = new_gl_context(*self.size, screen=screen)
            try:
                self.mjr: mujoco.MjrContext | None = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
            except Exception:
                self.gl.free()
                raise
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.mjr)
        self.mjr.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        # RGBA is the buffer's own layout: read as is, and copied out by whole rows (RGB would
        # be converted while reading and scattered into RGBA images after).
        self.mjr.readPixelFormat = _GL_RGBA
        self.scene = mujoco.MjvScene(model, maxgeom=max(maxgeom, 1000, 2 * model.ngeom + 100))
        self.perturb = mujoco.MjvPerturb()
        #: Whether colour frames get the gradient sky (:mod:`.sky`); a model with its own skybox keeps it.
        self.sky = not has_own_skybox(model)
        #: Number of ``mjr_render`` passes done (one per frame), for tests and benchmarks.
        self.passes = 0

    @property
    def model(self) -> mujoco.MjModel:
        """The render model's copy this context draws."""
        return self.render_model.model

    def make_current(self) -> None:
        if self.mjr is None:
            raise RuntimeError('this render context was freed')
        if self._pid != os.getpid():
            raise RuntimeError(f'this render context was made in process {self._pid}, which this one was forked from: '
                               'its GL state does not work here')
        self.gl.make_current()

    def release(self) -> None:
        """Make no context current on this thread (so another thread may take this one)."""
        release_current(self.gl)

    def ensure_capacity(self, maxgeom: int) -> None:
        """Grow the scene to hold ``maxgeom`` geoms (the overview draws every slot in one scene)."""
        if maxgeom > self.scene.maxgeom:
            self.scene = mujoco.MjvScene(self.model, maxgeom=int(maxgeom * 1.25) + 100)

    def update_scene(self, data: mujoco.MjData, camera: mujoco.MjvCamera, *, groups: np.ndarray | None = None,
                     offset: np.ndarray | None = None, add: bool = False, eye: np.ndarray | None = None) -> None:
        """Put ``data``'s geoms into the scene seen from ``camera``: with ``groups`` as the geom
        groups (see :class:`~.scene.FrustumCulling`), moved by ``offset`` (m, world frame), appended
        to what the scene holds when ``add``. ``eye`` moves infinite planes under the camera."""
        render_model = self.render_model
        model = render_model.model
        first = self.scene.ngeom if add else 0
        with render_model.lock:
            if groups is not None:
                saved = model.geom_group.copy()
                model.geom_group[:] = groups
            try:
                if add:
                    mujoco.mjv_addGeoms(model, data, render_model.option, self.perturb, mujoco.mjtCatBit.mjCAT_ALL.value,
                                        self.scene)
                else:
                    mujoco.mjv_updateScene(model, data, render_model.option, None, camera,
                                           mujoco.mjtCatBit.mjCAT_ALL.value, self.scene)
            finally:
                if groups is not None:
                    model.geom_group[:] = saved
        render_model.fix_planes(self.scene, data, eye, start=first)
        if offset is not None and np.any(offset):
            for index in range(first, self.scene.ngeom):
                self.scene.geoms[index].pos[:] += offset

    def set_clip(self, near: float, far: float) -> None:
        """Clip the scene's view at ``near`` and ``far`` metres (same field of view)."""
        for glcam in self.scene.camera:
            scale = near / glcam.frustum_near
            glcam.frustum_top *= scale
            glcam.frustum_bottom *= scale
            glcam.frustum_center *= scale
            glcam.frustum_width *= scale
            glcam.frustum_near = near
            glcam.frustum_far = far

    def set_view(self, position: np.ndarray, xmat: np.ndarray, fovy_deg: float, near: float, far: float) -> None:
        """Look from ``position`` (m) with orientation ``xmat`` (``(9,)``; along its -z, +y up) and a
        vertical field of view of ``fovy_deg``, clipped at ``near``/``far`` (the width follows the
        buffer's aspect), whatever camera the scene was updated with."""
        rotation = np.asarray(xmat, dtype=float).reshape(3, 3)
        top = near * math.tan(math.radians(fovy_deg) / 2)
        for glcam in self.scene.camera:
            glcam.pos[:] = position
            glcam.forward[:] = -rotation[:, 2]
            glcam.up[:] = rotation[:, 1]
            glcam.frustum_near, glcam.frustum_far = near, far
            glcam.frustum_top, glcam.frustum_bottom = top, -top
            glcam.frustum_center = glcam.frustum_width = 0.0
            glcam.orthographic = 0
        for index in range(self.scene.nlight):  # the headlight goes with the camera
            light = self.scene.lights[index]
            if light.headlight:
                light.pos[:] = position
                light.dir[:] = -rotation[:, 2]

    def draw(self, rect: mujoco.MjrRect, *, single_pass: bool = False, flat: bool = False, ids: bool = False,
             merge: bool = False) -> None:
        """Rasterize the scene into ``rect`` of the buffer.

        ``single_pass`` skips MuJoCo's extra passes (mirror reflections and shadow maps), so the
        scene is rasterized once; ``flat`` draws constant colours with no lighting or textures
        (for frames whose colour nobody reads); ``ids`` draws each geom in a colour that encodes
        its index in the scene plus one, and nothing (0) where no geom is (see :func:`scene_index_image`).
        ``merge`` ORs each fragment's colour into the pixel instead of replacing it (GL's colour
        logic op; the coverage passes of :mod:`.cameras`).
        The sky is put in when a colour frame is copied out (:meth:`copy_colour`).
        """
        flags = self.scene.flags
        saved = (flags[_FLAG_REFLECTION], flags[_FLAG_SHADOW], flags[_FLAG_SEGMENT], flags[_FLAG_IDCOLOR], flags[_FLAG_SKYBOX])
        if single_pass or flat or ids:
            flags[_FLAG_REFLECTION] = flags[_FLAG_SHADOW] = 0
        if flat or ids:
            flags[_FLAG_SEGMENT] = 1
        if ids:
            flags[_FLAG_IDCOLOR] = 1
            flags[_FLAG_SKYBOX] = 0
        if merge:
            GL = _gl()  # noqa: N806 - the library's name
            GL.glEnable(GL.GL_COLOR_LOGIC_OP)
            GL.glLogicOp(GL.GL_OR)
        try:
            mujoco.mjr_render(rect, self.scene, self.mjr)
        finally:
            if merge:
                GL.glDisable(GL.GL_COLOR_LOGIC_OP)
            (flags[_FLAG_REFLECTION], flags[_FLAG_SHADOW], flags[_FLAG_SEGMENT], flags[_FLAG_IDCOLOR],
             flags[_FLAG_SKYBOX]) = saved
        self.passes += 1

    def copy_colour(self, source: np.ndarray, target: np.ndarray, rotation: np.ndarray, fovy_deg: float) -> None:
        """Copy a colour frame read from the buffer (``source``, bottom row first) into ``target``
        (top row first, opaque), with the sky behind what was drawn unless the model has its own
        (:mod:`.sky`; the camera's orientation ``rotation`` and field of view place the horizon)."""
        if self.sky:
            sky_composite(source, target, rotation, fovy_deg)
        else:
            opaque_copy(source[::-1], target)

    def scene_geoms(self) -> np.ndarray:
        """Model geom id of each geom in the scene now (``int32 (ngeom,)``; -1 for decor that is not a model geom)."""
        geom = int(mujoco.mjtObj.mjOBJ_GEOM)
        return np.array([g.objid if g.objtype == geom else -1 for g in self.scene.geoms[:self.scene.ngeom]], dtype=np.int32)

    def read(self, rect: mujoco.MjrRect, rgba: np.ndarray | None, depth: np.ndarray | None) -> None:
        """Read ``rect`` of the buffer, bottom row first as OpenGL stores it: RGBA into ``rgba``
        ``(h, w, 4)`` uint8 and raw depth into ``depth`` ``(h, w)`` float32 (either may be ``None``)."""
        shape = (rect.height, rect.width)
        # MuJoCo writes as many bytes as the rectangle holds: a wrong buffer would be overrun.
        if rgba is not None and (rgba.shape != (*shape, 4) or rgba.dtype != np.uint8 or not rgba.flags.c_contiguous):
            raise ValueError(f'rgba read buffer must be C-contiguous uint8 {(*shape, 4)}; got {rgba.dtype} {rgba.shape}')
        if depth is not None and (depth.shape != shape or depth.dtype != np.float32 or not depth.flags.c_contiguous):
            raise ValueError(f'depth read buffer must be C-contiguous float32 {shape}; got {depth.dtype} {depth.shape}')
        # Wait for the rasterizer in mjr_finish, which lets go of Python's GIL (mjr_readPixels
        # holds it), so other render threads keep working meanwhile.
        mujoco.mjr_finish()
        mujoco.mjr_readPixels(rgba, depth, rect, self.mjr)

    def sample_nearest_mipmap(self) -> None:
        """Sample 2D textures from the nearest mipmap level (bilinear within it) instead of blending
        two levels (MuJoCo's trilinear filtering). On Mesa's CPU rasterizer that halves the texture
        work of a textured floor, which fills much of a robot camera's frame (about a tenth of a
        third-person frame's CPU time); the frames stay within 50 dB PSNR of trilinear ones
        (``docs/rendering.md``). Call with the context current."""
        GL = _gl()  # noqa: N806 - the library's name
        assert self.mjr is not None
        for texture, kind in zip(self.mjr.texture[:self.mjr.ntexture], self.mjr.textureType[:self.mjr.ntexture], strict=True):
            if int(kind) != int(mujoco.mjtTexture.mjTEXTURE_2D):
                continue
            GL.glBindTexture(GL.GL_TEXTURE_2D, int(texture))
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_LINEAR_MIPMAP_NEAREST)
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)

    def free(self) -> None:
        """Release the GL resources (idempotent); call on the thread that uses the context."""
        if self.mjr is None:
            return
        mjr, self.mjr = self.mjr, None
        if self._pid != os.getpid():  # (inherited through fork: its display is the parent's, see .fork)
            keep_forever((mjr, self.gl))
            return
        try:
            self.gl.make_current()
            mjr.free()
        finally:
            self.gl.free()


def _depth_rows(raw: np.ndarray, c: float, d: float, far: float, out: np.ndarray) -> None:
    """Compiled twin of :func:`metric_depth` (perspective): one pass, rows flipped (``raw`` bottom row first)."""
    height, width = out.shape
    for row in range(height):
        source = height - 1 - row
        for col in range(width):
            z = raw[source, col]
            if z <= 0.0:
                out[row, col] = far
            else:
                value = d / (z + c)
                out[row, col] = far if value > far else value


_depth_kernel = Kernel(_depth_rows)


def warm_kernels() -> None:
    """Compile (or load from numba's cache) the depth kernel now, when numba is there."""
    warm_sky_kernel()
    if _depth_kernel.available:
        _depth_kernel.warm(np.zeros((1, 1), np.float32), np.float32(0), np.float32(1), np.float32(1),
                           np.zeros((1, 1), np.float32))


def _depth_constants(near: float, far: float) -> tuple[np.float32, np.float32, np.float32]:
    far, near = float(np.float32(far)), float(np.float32(near))  # as the GL camera holds them
    # Depth maps to distance as d / (z + c) (the projection MuJoCo sets up, inverted); the
    # constants are formed in double precision, c being a small difference.
    return np.float32(0.5 * (far + near) / (far - near) - 0.5), np.float32(far * near / (far - near)), np.float32(far)


def metric_depth(raw: np.ndarray, near: float, far: float, out: np.ndarray | None = None,
                 orthographic: bool = False) -> np.ndarray:
    """MuJoCo's depth-buffer values (reversed Z, ``mjDEPTH_ZEROFAR``) to distances along the optical
    axis in metres; pixels where nothing was drawn (the cleared buffer) read ``far``."""
    if out is None:
        out = np.empty(raw.shape, dtype=np.float32)
    if orthographic:
        zfar = np.float32(far)
        np.multiply(raw, np.float32(float(near) - float(far)), out=out)
        out += zfar
        return out
    c, d, zfar = _depth_constants(near, far)
    np.add(raw, c, out=out)
    with np.errstate(divide='ignore'):
        np.divide(d, out, out=out)
    np.minimum(out, zfar, out=out)
    np.copyto(out, zfar, where=raw <= 0)  # nothing drawn: exactly the far plane
    return out


def depth_from_buffer(raw: np.ndarray, near: float, far: float, out: np.ndarray) -> None:
    """:func:`metric_depth` of ``raw`` read bottom row first (as OpenGL stores it) into ``out``
    top row first: one compiled pass when numba is there, numpy otherwise."""
    if _depth_kernel.available:
        c, d, zfar = _depth_constants(near, far)
        _depth_kernel(raw, c, d, zfar, out)
    else:
        metric_depth(raw[::-1], near, far, out=out)


def scene_index_image(rgba: np.ndarray) -> np.ndarray:
    """Scene geom index ``int32 (H, W)`` of each pixel of an id-coloured frame (``draw(ids=True)``;
    ``rgba`` is ``(H, W, 4)`` uint8, C-contiguous), ``-1`` where nothing was drawn."""
    pixels = rgba.view('<u4')[..., 0] & np.uint32(0xFFFFFF)  # bytes r, g, b, a: r is the low byte
    return pixels.astype(np.int32) - 1


def opaque_copy(source: np.ndarray, target: np.ndarray) -> None:
    """Copy an RGBA image ``source`` (rows in any order, e.g. a flipped view) into ``target``
    (``(H, W, 4)`` uint8, alpha set to 255, or ``(H, W, 3)``, alpha dropped)."""
    if target.shape[-1] == 3:
        target[...] = source[..., :3]
        return
    target[...] = source
    if target.flags.c_contiguous:
        pixels = target.view(np.uint32)
        np.bitwise_or(pixels, ALPHA_MASK, out=pixels)
    else:
        target[..., 3] = 255


__all__ = ['ALPHA_MASK', 'RenderContext', 'depth_from_buffer', 'metric_depth', 'opaque_copy', 'scene_index_image', 'warm_kernels']
