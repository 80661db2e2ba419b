"""USD purposes: ``proxy`` geometry stands in for ``render`` geometry in interactive viewports.

A stage that has both (an asset's detailed mesh and its box-shaped proxy, at one place) is drawn
from its render geometry only, as final images are; before, the proxy was drawn over it (here a
larger blue box hid the red one). A stage with only proxies draws them, and a colliding proxy in a
stage that uses ``CollisionAPI`` still collides, hidden, as a guide collider does.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

pytest.importorskip('pxr')
from pxr import Gf, UsdGeom, UsdPhysics  # noqa: E402

from internutopia.core.backend.mujoco.usd_scene import usd_scene_to_spec  # noqa: E402
from tests.scene_helpers import new_stage  # noqa: E402


def _cube(stage, path: str, size: float, rgb: tuple[float, float, float], purpose: str | None) -> UsdGeom.Cube:
    cube = UsdGeom.Cube.Define(stage, path)
    cube.CreateSizeAttr(size)
    cube.CreateDisplayColorAttr([Gf.Vec3f(*rgb)])
    if purpose is not None:
        cube.CreatePurposeAttr(purpose)
    return cube


def _top_view(model: mujoco.MjModel) -> np.ndarray:
    """An image looking straight down at the origin from 3 m, the cubes filling its middle."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    camera = mujoco.MjvCamera()
    camera.lookat[:] = (0.0, 0.0, 0.0)
    camera.distance, camera.elevation, camera.azimuth = 3.0, -90.0, 0.0
    with mujoco.Renderer(model, 64, 64) as renderer:
        renderer.update_scene(data, camera)
        return renderer.render()


def _twins(tmp_path: Path, *, render_twin: bool) -> Path:
    stage = new_stage(tmp_path / 'twins.usda')
    asset = UsdGeom.Xform.Define(stage, '/World/Chair')
    if render_twin:
        _cube(stage, '/World/Chair/Detailed', 0.4, (1.0, 0.0, 0.0), UsdGeom.Tokens.render)
    _cube(stage, '/World/Chair/Proxy', 1.0, (0.0, 0.0, 1.0), UsdGeom.Tokens.proxy)
    stage.SetDefaultPrim(asset.GetPrim())
    stage.Save()
    return tmp_path / 'twins.usda'


def test_a_proxy_with_a_render_twin_is_not_drawn(tmp_path):
    model = usd_scene_to_spec(_twins(tmp_path, render_twin=True)).compile()
    names = [model.geom(i).name for i in range(model.ngeom)]
    assert 'World/Chair/Detailed' in names and 'World/Chair/Proxy' not in names
    image = _top_view(model).astype(int)
    red, _, blue = image[32, 32]
    assert red > 2 * blue  # the red render cube (the proxy's top, 30 cm above it, was drawn blue over it)
    assert image[32, 20, 2] < 100  # where only the larger proxy reaches: background, not blue


def test_a_stage_of_proxies_only_draws_them(tmp_path):
    model = usd_scene_to_spec(_twins(tmp_path, render_twin=False)).compile()
    assert [model.geom(i).name for i in range(model.ngeom)] == ['World/Chair/Proxy']
    red, _, blue = _top_view(model).astype(int)[32, 32]
    assert blue > 2 * red  # the blue proxy


def test_a_colliding_proxy_beside_a_render_twin_collides_hidden(tmp_path):
    stage = new_stage(tmp_path / 'collide.usda')
    _cube(stage, '/World/Chair/Detailed', 0.4, (1.0, 0.0, 0.0), UsdGeom.Tokens.render)
    proxy = _cube(stage, '/World/Chair/Proxy', 0.5, (0.0, 0.0, 1.0), UsdGeom.Tokens.proxy)
    UsdPhysics.CollisionAPI.Apply(proxy.GetPrim())
    stage.Save()
    model = usd_scene_to_spec(tmp_path / 'collide.usda').compile()
    proxy_geom = model.geom('World/Chair/Proxy')
    assert proxy_geom.contype[0] != 0 and proxy_geom.group[0] == 3  # collides, hidden
    detailed = model.geom('World/Chair/Detailed')
    assert detailed.contype[0] == 0 and detailed.conaffinity[0] == 0  # drawn, visual only
