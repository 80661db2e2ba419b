"""Helpers of the scene tests (``test_scenes*.py``): the bundled scenes' paths, USD stages, worlds
built as the backend builds them, and reading them back."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

pytest.importorskip('pxr')  # (collected for doctests on its own too: skipped there without USD)
from pxr import Usd, UsdGeom  # noqa: E402

SCENES = Path(__file__).resolve().parents[1] / 'internutopia' / 'assets' / 'scenes'
EMPTY = SCENES / 'empty.usd'
TWO_ROOMS = SCENES / 'two_rooms.usda'
OFFICE = SCENES / 'office.xml'

BOX, PLANE, MESH = mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_MESH


def new_stage(path: Path, meters_per_unit: float = 1.0, up: str = 'Z') -> Usd.Stage:
    """A new USD stage at ``path`` with the given units and up axis, its default prim ``/World``."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z if up == 'Z' else UsdGeom.Tokens.y)
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, '/World').GetPrim())
    return stage


def world_with(*parts, offsets=None, degree=False) -> mujoco.MjSpec:
    """A world like the backend's: each part attached under ``env{i}/scene/`` into a frame."""
    world = mujoco.MjSpec()
    world.compiler.degree = degree
    world.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    for i, part in enumerate(parts):
        pos = [0.0, 0.0, 0.0] if offsets is None else list(offsets[i])
        frame = world.worldbody.add_frame(name=f'env{i}', pos=pos)
        world.attach(part, prefix=f'env{i}/scene/', frame=frame)
    return world


def add_ball(world: mujoco.MjSpec, pos, radius=0.1, name='ball'):
    """A free sphere body added to ``world`` at ``pos``."""
    body = world.worldbody.add_body(name=name, pos=list(pos))
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[radius, 0, 0], density=500.0)
    return body


def compiled(spec: mujoco.MjSpec) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """``spec`` compiled, with its data after one forward pass."""
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def simulate(model, data, seconds: float) -> None:
    """Step ``data`` for ``seconds`` of simulated time."""
    for _ in range(int(seconds / model.opt.timestep)):
        mujoco.mj_step(model, data)


def geom_named(model, data, name):
    """Id, world position, size and rotation matrix of the geom ``name``."""
    g = model.geom(name)
    return g.id, data.geom_xpos[g.id].copy(), model.geom_size[g.id].copy(), data.geom_xmat[g.id].reshape(3, 3).copy()


def rot_z(deg: float) -> np.ndarray:
    """Rotation matrix of ``deg`` degrees about z."""
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def quat_z(deg: float) -> tuple:
    """wxyz of ``deg`` degrees about z."""
    return (math.cos(math.radians(deg) / 2), 0.0, 0.0, math.sin(math.radians(deg) / 2))
