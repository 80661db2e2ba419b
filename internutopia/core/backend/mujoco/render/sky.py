"""The sky: a gradient from a pale horizon to a light blue zenith behind everything drawn.

MuJoCo's own skybox is geometry: it writes the depth buffer, so a depth image would read the
skybox's distance (hundreds of metres, varying over the image) where nothing is, instead of the
far clip. The sky here is drawn after the scene, into the pixels the scene left empty (their
depth is still the cleared value), and writes no depth: depth images, segmentation and the
"nothing drawn" test of the depth conversion are untouched.

It is a grid of quads over the viewport, coloured per vertex by the elevation of the ray through
that vertex (so the horizon tilts and moves with the camera); a model that brings its own
skybox texture keeps it (MuJoCo draws that one, and the gradient is not drawn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

#: Colour at the horizon and below it, and at the zenith (linear mix by the sine of the elevation).
SKY_HORIZON = np.array([0.86, 0.90, 0.95])
SKY_ZENITH = np.array([0.45, 0.62, 0.86])
#: Quads per side of the sky grid (the colour is interpolated linearly across each quad).
SKY_QUADS = 6


def has_own_skybox(model: mujoco.MjModel) -> bool:
    """Whether ``model`` has a skybox texture (MuJoCo then draws its own sky)."""
    return bool(np.any(model.tex_type == mujoco.mjtTexture.mjTEXTURE_SKYBOX))


def sky_colours(scene: mujoco.MjvScene, aspect: float, quads: int = SKY_QUADS) -> np.ndarray:
    """RGB ``(quads + 1, quads + 1, 3)`` of the sky at the grid's vertices (rows bottom to top)
    for the scene's (first) GL camera and a viewport of ``aspect`` (width / height)."""
    camera = scene.camera[0]
    forward = np.asarray(camera.forward, dtype=float)
    up = np.asarray(camera.up, dtype=float)
    right = np.cross(forward, up)
    near = max(float(camera.frustum_near), 1e-9)
    top, bottom = float(camera.frustum_top), float(camera.frustum_bottom)
    # A frustum width of 0 means the viewport's aspect decides (as mjr_render does).
    half_width = float(camera.frustum_width) or (top - bottom) / 2 * aspect
    steps = np.linspace(0.0, 1.0, quads + 1)
    xs = float(camera.frustum_center) - half_width + 2 * half_width * steps
    ys = bottom + (top - bottom) * steps
    rays = (forward * near)[None, None] + ys[:, None, None] * up + xs[None, :, None] * right
    elevation = rays[..., 2] / np.linalg.norm(rays, axis=-1)
    mix = np.clip(elevation, 0.0, 1.0)[..., None]
    return SKY_HORIZON * (1 - mix) + SKY_ZENITH * mix


def _grid_quads(quads: int) -> np.ndarray:
    """Vertex indices ``(quads * quads * 4,)`` of the grid's quads, into a row-major vertex grid."""
    rows, cols = np.meshgrid(np.arange(quads), np.arange(quads), indexing='ij')
    corner = rows * (quads + 1) + cols
    return np.stack([corner, corner + 1, corner + quads + 2, corner + quads + 1], axis=-1).reshape(-1)


_QUAD_INDEX = _grid_quads(SKY_QUADS)
_GRID = np.stack(np.meshgrid(np.linspace(-1.0, 1.0, SKY_QUADS + 1), np.linspace(-1.0, 1.0, SKY_QUADS + 1),
                             indexing='xy'), axis=-1).reshape(-1, 2)[_QUAD_INDEX].astype(np.float32)


def draw_sky(scene: mujoco.MjvScene, rect: mujoco.MjrRect, render: Callable[[], None]) -> None:
    """Call ``render`` (an ``mjr_render`` of ``scene`` into ``rect``), then fill the pixels it left
    empty with the sky, in the framebuffer that was bound before (``mjr_render`` binds MuJoCo's own
    offscreen buffer when it is done). A handful of GL calls: the grid goes over as one vertex array."""
    from OpenGL import GL  # imported once a GL context exists (see framebuffers._gl)

    framebuffer = int(np.asarray(GL.glGetIntegerv(GL.GL_DRAW_FRAMEBUFFER_BINDING)).item())
    render()
    GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, framebuffer)
    colours = sky_colours(scene, rect.width / max(rect.height, 1)).reshape(-1, 3)[_QUAD_INDEX].astype(np.float32)
    _push_state(GL, rect)
    try:
        GL.glEnableClientState(GL.GL_VERTEX_ARRAY)
        GL.glEnableClientState(GL.GL_COLOR_ARRAY)
        GL.glVertexPointer(2, GL.GL_FLOAT, 0, _GRID)
        GL.glColorPointer(3, GL.GL_FLOAT, 0, colours)
        GL.glDrawArrays(GL.GL_QUADS, 0, len(_GRID))
        GL.glDisableClientState(GL.GL_COLOR_ARRAY)
        GL.glDisableClientState(GL.GL_VERTEX_ARRAY)
    finally:
        _pop_state(GL)


def _push_state(GL: Any, rect: mujoco.MjrRect) -> None:  # noqa: N803 - the library's name
    # Only what is changed here is saved (saving every attribute, textures included, costs more
    # than the sky); mjr_render sets its own matrices on every call, so they are not restored.
    GL.glPushAttrib(GL.GL_ENABLE_BIT | GL.GL_DEPTH_BUFFER_BIT | GL.GL_VIEWPORT_BIT | GL.GL_LIGHTING_BIT)
    GL.glViewport(rect.left, rect.bottom, rect.width, rect.height)
    GL.glMatrixMode(GL.GL_PROJECTION)
    GL.glLoadIdentity()
    GL.glMatrixMode(GL.GL_MODELVIEW)
    GL.glLoadIdentity()
    for capability in (GL.GL_LIGHTING, GL.GL_TEXTURE_2D, GL.GL_BLEND, GL.GL_CULL_FACE, GL.GL_FOG):
        GL.glDisable(capability)
    GL.glEnable(GL.GL_DEPTH_TEST)
    # Every fragment of the sky has depth 0 (the cleared value of MuJoCo's reversed-Z buffer):
    # it passes only where nothing was drawn, and writes nothing.
    GL.glDepthRange(0.0, 0.0)
    GL.glDepthFunc(GL.GL_EQUAL)
    GL.glDepthMask(GL.GL_FALSE)
    GL.glShadeModel(GL.GL_SMOOTH)


def _pop_state(GL: Any) -> None:  # noqa: N803 - the library's name
    GL.glPopAttrib()


__all__ = ['SKY_HORIZON', 'SKY_QUADS', 'SKY_ZENITH', 'draw_sky', 'has_own_skybox', 'sky_colours']
