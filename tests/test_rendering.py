"""What cameras see (the whole scene of their own slot, to the horizon), level of detail, texture
sampling and the floor, all checked on the pixels, headless on the CPU (Mesa EGL). Batched and
threaded frames are in ``test_rendering_frames.py``; shared helpers in ``rendering_helpers.py``."""

from __future__ import annotations

import math
import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.backend.mujoco.render import camera_renderers, lod, overview_camera  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1RobotCfg, h1_camera_cfg, h1_tp_camera_cfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from tests.rendering_helpers import make_env, psnr, yaw_quat  # noqa: E402


def floor_prediction(reading, width, height, fovy=60.0):
    """Where the infinite ground (z = 0) should be in a camera image, and its depth there."""
    pose = reading['camera_params']['pose']
    w, x, y, z = pose['orientation']
    rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    focal = (height / 2) / math.tan(math.radians(fovy) / 2)
    cols, rows = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    rays = np.stack([(cols - width / 2) / focal, -(rows - height / 2) / focal, -np.ones_like(cols)], axis=-1) @ rot.T
    down = rays[..., 2] < -1e-3
    # Camera-frame z of each ray is -1, so the distance along the optical axis is the ray parameter.
    depth = np.where(down, pose['position'][2] / np.maximum(-rays[..., 2], 1e-9), np.inf)
    return down & (depth < 500.0), depth


@pytest.mark.parametrize('offset', [1.0, 5.0, 10.0])
def test_head_camera_sees_the_ground_to_the_horizon_and_no_other_slot(offset):
    """Each slot's head camera sees its floor up to the horizon wherever the robot stands, and the
    robot of the neighbouring slot (``offset`` away on the grid, straight ahead of slot 0's
    camera) is never drawn."""
    width, height = 64, 48
    camera = h1_camera_cfg.update(resolution=(width, height), depth=True, camera_params=True)
    # Slot 0 faces +y, toward slot 1's grid cell; the others stand far out of their own cells.
    poses = [((0.0, 0.0), 90.0), ((0.0, 0.0), 0.0), ((3.0, 0.0), 0.0), ((-7.0, 4.0), 200.0)]
    tasks = [FiniteStepTaskCfg(max_steps=50, robots=[H1RobotCfg(position=(x, y, 1.05), orientation=yaw_quat(yaw),
                                                                 sensors=[camera])]) for (x, y), yaw in poses]
    env = make_env(tasks, env_num=4, offset=offset)
    obs, _ = env.reset()
    fractions = []
    for slot in range(4):
        reading = obs[slot]['h1']['sensors']['camera']
        floor, expected_depth = floor_prediction(reading, width, height)
        drawn = reading['depth'] < 999.0
        rgb = reading['rgba'][..., :3].astype(int)
        # The ground fills the image below the horizon (the view is about 60 % floor) and
        # nothing else is drawn: no black beyond the grid cell, no robot of another slot.
        assert 0.55 < floor.mean() < 0.75
        assert (drawn == floor).mean() > 0.97, f'slot {slot}: drawn pixels do not match the ground'
        assert np.all(rgb[floor].sum(axis=1) > 20), f'slot {slot}: black pixels on the ground'
        # Where nothing is drawn the sky shows (it was black before scenes had a sky): light, blue over red.
        sky = rgb[~drawn]
        assert np.all(sky.sum(axis=1) > 450) and np.all(sky[:, 2] > sky[:, 0])
        near = floor & (expected_depth < 30.0)
        np.testing.assert_allclose(reading['depth'][near], expected_depth[near], rtol=0.03)
        fractions.append(drawn.mean())
    assert max(fractions) - min(fractions) < 0.03  # the same view wherever the robot stands
    env.close()


def test_overview_draws_the_ground_of_each_cell_only():
    width, height, offset = 320, 240, 4.0
    env = make_env([FiniteStepTaskCfg(max_steps=10)] * 4, env_num=4, offset=offset)
    env.reset()
    image = env.render(width, height).astype(int)
    world = env.runner.world
    camera = overview_camera(world, width, height)
    half = offset / 2
    inside = np.array([origin + [dx, dy, 0.0] for origin in world.origins
                       for dx in (-0.8 * half, 0.0, 0.8 * half) for dy in (-0.8 * half, 0.8 * half)])
    low, high = world.origins[:, :2].min(axis=0) - half, world.origins[:, :2].max(axis=0) + half
    outside = np.array([[low[0] - 1.0, low[1] + 1.0, 0.0], [high[0] + 1.0, high[1] - 1.0, 0.0],
                        [low[0] + 1.0, high[1] + 1.0, 0.0], [high[0] - 1.0, low[1] - 1.0, 0.0]])
    for col, row in camera.project(inside, width, height):
        assert image[int(row), int(col)].sum() > 30, 'ground missing inside the grid'
    for col, row in camera.project(outside, width, height):
        if 0 <= col < width and 0 <= row < height:
            # Beyond the grid the sky shows (black before renders had a sky): light, blue over red.
            pixel = image[int(row), int(col)]
            assert pixel.sum() > 450 and pixel[2] > pixel[0], 'ground drawn beyond the grid'
    env.close()


def test_level_of_detail_is_for_rendering_only_and_close_to_full_detail():
    width, height = 160, 120
    sensors = [h1_tp_camera_cfg.update(resolution=(width, height)), h1_camera_cfg.update(resolution=(width, height))]
    frames, models = {}, {}
    for lod_on in (True, False):
        env = make_env([FiniteStepTaskCfg(max_steps=10, robots=[H1RobotCfg(sensors=sensors)])], env_num=1,
                       rendering_lod=lod_on)
        obs, _ = env.reset()
        frames[lod_on] = {name: obs[0]['h1']['sensors'][name]['rgba'] for name in ('tp_camera', 'camera')}
        (renderer,) = camera_renderers(env.runner.world)
        pack = env.runner.world.pack(0)
        models[lod_on] = (int(pack.drawn_model.mesh_facenum.sum()), int(renderer.render_model.model.mesh_facenum.sum()),
                          int(pack.model.mesh_facenum.sum()))
        env.close()
    full_faces, drawn_faces, physics_faces = models[True]
    assert models[False] == (full_faces, full_faces, physics_faces)  # switched off: full detail
    assert drawn_faces < full_faces / 4  # decimated copy for rendering ...
    assert full_faces > 200_000 and physics_faces == 0  # ... of the full model; the physics model has no looks
    tp_lod, tp_full = frames[True]['tp_camera'], frames[False]['tp_camera']
    assert psnr(tp_lod[..., :3], tp_full[..., :3]) > 30.0
    robot = np.abs(tp_full[..., :3].astype(int) - frames[True]['camera'][..., :3].astype(int)).sum() > 0
    assert robot  # the third-person view does show the robot (the comparison means something)
    assert psnr(frames[True]['camera'][..., :3], frames[False]['camera'][..., :3]) > 40.0


def sphere_mesh(stacks=40, slices=60):
    theta = np.linspace(0, np.pi, stacks + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, slices, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing='ij')
    vertices = np.concatenate([[[0, 0, 1]], np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3),
                               [[0, 0, -1]]]).astype(np.float32)
    ring = lambda i, j: 1 + i * slices + j % slices  # noqa: E731
    faces = [(0, ring(0, j), ring(0, j + 1)) for j in range(slices)]
    for i in range(stacks - 2):
        for j in range(slices):
            faces += [(ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)), (ring(i, j), ring(i + 1, j + 1), ring(i, j + 1))]
    last = len(vertices) - 1
    faces += [(ring(stacks - 2, j), last, ring(stacks - 2, j + 1)) for j in range(slices)]
    return vertices, np.asarray(faces, dtype=np.int32)


def test_decimated_meshes_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv('INTERNUTOPIA_CACHE_DIR', str(tmp_path))
    vertices, faces = sphere_mesh()
    first = lod.decimate(vertices, faces, 400)
    assert 300 <= len(first.faces) <= 420 and len(first.vertices) < len(vertices)
    assert first.faces.max() < len(first.vertices)
    np.testing.assert_allclose(np.linalg.norm(first.normals, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(first.vertices, axis=1), 1.0, atol=0.1)  # still a unit sphere
    stored = list(tmp_path.rglob('*.npz'))
    assert len(stored) == 1 and lod.content_key(vertices, faces, 400) in stored[0].name
    # A new process (empty memory cache) loads it from disk and decimates nothing.
    lod._memory.clear()
    monkeypatch.setattr(lod, '_simplify', lambda *args: pytest.fail('decimated again instead of loading the cache'))
    again = lod.decimate(vertices, faces, 400)
    np.testing.assert_array_equal(again.faces, first.faces)
    np.testing.assert_array_equal(again.vertices, first.vertices)
    assert lod.content_key(vertices, faces, 400) != lod.content_key(vertices, faces, 300)
    with pytest.raises(ValueError, match='budget'):
        lod.apply_lod(None, budget=0)


def test_a_corrupt_lod_cache_file_is_decimated_again_and_replaced(tmp_path, monkeypatch):
    """A cache file cut short (a full disk, a killed writer of an older version), overwritten with
    junk, or holding faces that index past its vertices, is ignored: the mesh is decimated again
    and the file rewritten, never a crash or a broken mesh."""
    monkeypatch.setenv('INTERNUTOPIA_CACHE_DIR', str(tmp_path))
    lod._memory.clear()
    vertices, faces = sphere_mesh()
    good = lod.decimate(vertices, faces, 400)
    (path,) = tmp_path.rglob('*.npz')
    whole = path.read_bytes()
    bad_faces = good.faces.copy()
    bad_faces[0, 0] = len(good.vertices) + 5
    bad = tmp_path / 'bad.npz'
    np.savez(bad, vertices=good.vertices, faces=bad_faces, normals=good.normals)
    for corrupt in (whole[:len(whole) // 2], b'junk' * 20, b'', bad.read_bytes(), whole[:-30]):
        path.write_bytes(corrupt)
        lod._memory.clear()
        again = lod.decimate(vertices, faces, 400)
        np.testing.assert_array_equal(again.faces, good.faces)
        np.testing.assert_array_equal(again.vertices, good.vertices)
        with np.load(path) as stored:  # rewritten whole
            np.testing.assert_array_equal(stored['faces'], good.faces)


def test_camera_textures_sample_the_nearest_mipmap_close_to_trilinear():
    """Robot cameras sample the floor's texture from one mipmap level (cheaper on Mesa's CPU
    rasterizer); the H1 third-person frame is within 45 dB of MuJoCo's trilinear sampling."""
    from OpenGL import GL

    from internutopia.core.backend.mujoco.render.cameras import FrameRequest

    width, height = 160, 120
    env = make_env([FiniteStepTaskCfg(max_steps=10, robots=[H1RobotCfg(sensors=[h1_tp_camera_cfg.update(
        resolution=(width, height))])])], env_num=1)
    try:
        env.reset()
        (renderer,) = camera_renderers(env.runner.world)
        cam = renderer.pack.model.ncam - 1

        def frame() -> np.ndarray:
            request = FrameRequest(0, cam, np.empty((height, width, 4), np.uint8), None)
            renderer.render([request])
            assert request.rgb is not None
            return request.rgb[..., :3].copy()

        nearest = frame()
        (context,) = renderer.contexts
        context.make_current()
        textures = [int(t) for t, kind in zip(context.mjr.texture[:context.mjr.ntexture],
                                              context.mjr.textureType[:context.mjr.ntexture], strict=True) if kind == 0]
        assert textures  # the default ground's checker
        for texture in textures:
            GL.glBindTexture(GL.GL_TEXTURE_2D, texture)
            assert GL.glGetTexParameteriv(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER) == GL.GL_LINEAR_MIPMAP_NEAREST
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_LINEAR_MIPMAP_LINEAR)
        trilinear = frame()
        assert 45.0 < psnr(nearest, trilinear) < math.inf
    finally:
        env.close()


def test_camera_models_draw_the_reflective_floor_opaque_with_the_same_pixels():
    """Camera frames have no mirror reflections, so the camera model drops the floor's reflectance
    (MuJoCo would still blend the floor additively onto the cleared buffer): the H1 third-person
    frames, colour and depth, are bit for bit those drawn with the reflectance kept."""
    from internutopia.core.backend.mujoco.render.cameras import FrameRequest

    width, height = 160, 120
    env = make_env([FiniteStepTaskCfg(max_steps=10, robots=[H1RobotCfg(sensors=[h1_tp_camera_cfg.update(
        resolution=(width, height), depth=True)])])] * 2, env_num=2)
    try:
        env.reset()
        (renderer,) = camera_renderers(env.runner.world)
        cam = renderer.pack.model.ncam - 1
        camera_model, source = renderer.render_model.model, renderer.render_model.source
        assert source.mat_reflectance.max() > 0 and not camera_model.mat_reflectance.any()

        def frames() -> list[tuple[np.ndarray, np.ndarray]]:
            requests = [FrameRequest(slot, cam, np.empty((height, width, 4), np.uint8), np.empty((height, width), np.float32))
                        for slot in (0, 1)]
            renderer.render(requests)
            return [(r.rgb.copy(), r.depth.copy()) for r in requests if r.rgb is not None and r.depth is not None]

        opaque = frames()
        camera_model.mat_reflectance[:] = source.mat_reflectance
        blended = frames()
        assert len(opaque) == len(blended) == 2
        for (rgb, depth), (rgb_blended, depth_blended) in zip(opaque, blended, strict=True):
            assert np.array_equal(rgb, rgb_blended) and np.array_equal(depth, depth_blended)
            assert rgb[..., :3].std() > 10  # a real frame: floor, sky and robot
    finally:
        env.close()
