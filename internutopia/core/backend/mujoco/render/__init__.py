"""Offscreen rendering of the :class:`~internutopia.core.backend.mujoco.world.MujocoWorld` on the CPU.

The parts, each a module of this package:

- :mod:`.gl`: which GL context class renders (``MUJOCO_GL``; ``egl`` by default on headless Linux).
- :mod:`.lod`: level of detail: visual meshes decimated for rendering only, cached on disk.
- :mod:`.scene`: what is drawn: render models (private copies of a pack's model with LOD meshes
  and planes drawn to the horizon for robot cameras, or cut to the slot's cell for the overview),
  frustum culling, slot poses.
- :mod:`.context`: a GL context with its ``MjrContext`` and offscreen buffer; depth to metres.
- :mod:`.cameras`: robot camera frames of a step, all drawn before any is read back (with their
  id-coloured segmentation passes when asked for).
- :mod:`.semantics`: semantic labels and instances of a slot model's geoms (segmentation ids).
- :mod:`.sky`: the sky composited behind a colour frame where nothing was drawn.
- :mod:`.framebuffers`: a framebuffer per frame of such a batch.
- :mod:`.pack`: the rendering state of each pack, and the render clock.
- :mod:`.overview`: ``env.render()``, the whole grid in one image.
- :mod:`.viewer`: MuJoCo's interactive viewer on one slot.

A slot is its own simulation, so its cameras see its own slot only; its ground reaches the
horizon whatever ``env_offset_size`` is. See ``docs/rendering.md``.
"""

from internutopia.core.backend.mujoco.render.gl import gl_context_class  # noqa: I001 (sets the GL default first)
from internutopia.core.backend.mujoco.render.cameras import MAX_BUFFER_PIXELS, CameraRenderer, FrameRequest
from internutopia.core.backend.mujoco.render.context import RenderContext, metric_depth
from internutopia.core.backend.mujoco.render.lod import FACE_BUDGET, cache_dir, lod_model
from internutopia.core.backend.mujoco.render.overview import (
    OVERVIEW_FOVY,
    OverviewCamera,
    env_camera,
    overview_camera,
    render_envs,
    render_overview,
)
from internutopia.core.backend.mujoco.render.pack import (
    PackRender,
    RenderClock,
    camera_renderers,
    has_render_state,
    pack_render,
    release,
    render_contexts,
    world_packs,
)
from internutopia.core.backend.mujoco.render.scene import (
    HIDDEN_GROUP,
    HORIZON_M,
    FrustumCulling,
    RenderModel,
    mat_to_quat,
)
from internutopia.core.backend.mujoco.render.viewer import PassiveViewer

__all__ = ['FACE_BUDGET', 'HIDDEN_GROUP', 'HORIZON_M', 'MAX_BUFFER_PIXELS', 'OVERVIEW_FOVY', 'CameraRenderer', 'FrameRequest',
           'FrustumCulling', 'OverviewCamera', 'PackRender', 'PassiveViewer', 'RenderClock', 'RenderContext', 'RenderModel',
           'cache_dir', 'camera_renderers', 'env_camera', 'gl_context_class', 'has_render_state', 'lod_model', 'mat_to_quat', 'metric_depth',
           'overview_camera', 'pack_render', 'release', 'render_contexts', 'render_envs', 'render_overview', 'world_packs']
