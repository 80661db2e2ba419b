"""The web viewer: meshes of a model, a page that follows the env, and robots drawn in a real
headless browser (Chromium, software WebGL)."""

from __future__ import annotations

import base64
import os
import socket
import tempfile
import time

import numpy as np
import pytest

pytest.importorskip('viser', reason="the viewer comes with the 'viewer' extra")

from internutopia.core.grid import slot_origins  # noqa: E402
from internutopia.viewer import attach_viewer  # noqa: E402
from internutopia.viewer.geometry import body_meshes, quat_to_matrix  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1RobotCfg, h1_camera_cfg, move_by_speed_cfg  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402
from tests.browser import Browser, chromium, wait_for  # noqa: E402

WIDTH, HEIGHT = 1200, 800


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture
def h1_env(make_config):
    from internutopia.core.vec_env import Env

    camera = h1_camera_cfg.update(resolution=(64, 48), depth=False, enable=True)
    with_camera = SingleInferenceTaskCfg(robots=[H1RobotCfg(controllers=[move_by_speed_cfg], sensors=[camera])])
    without = SingleInferenceTaskCfg(robots=[H1RobotCfg(controllers=[move_by_speed_cfg])])
    env = Env(make_config([with_camera, without, without], env_num=4, offset=4.0))
    yield env
    env.close()


def test_quat_to_matrix_rotates_like_mujoco():
    import mujoco

    quat = np.array([0.8, 0.2, -0.4, 0.4])
    quat /= np.linalg.norm(quat)
    expected = np.zeros(9)
    mujoco.mju_quat2Mat(expected, quat)
    assert np.allclose(quat_to_matrix(quat), expected.reshape(3, 3))


def test_body_meshes_are_the_visible_geoms_in_each_body_frame(h1_env):
    h1_env.reset()
    pack = h1_env.runner.world.pack(0)
    meshes = body_meshes(pack.drawn_model)
    moving = body_meshes(pack.drawn_model, static_only=False)
    assert moving and len(moving) <= len(meshes)
    bodies = {mesh.body for mesh in moving}
    assert len(bodies) >= 15  # the H1's links, each drawn
    for mesh in meshes:
        assert mesh.vertices.dtype == np.float32 and mesh.faces.dtype == np.uint32
        assert mesh.faces.max() < len(mesh.vertices) and 0 < mesh.opacity <= 1
        assert np.abs(mesh.vertices).max() < 1.0  # in the body's frame: a link is well under a metre from its origin
    # a level-of-detail copy keeps the triangles few enough for a browser
    assert sum(len(mesh.faces) for mesh in meshes) < 50_000


def test_the_page_follows_the_env(h1_env):
    viewer = attach_viewer(h1_env, host='127.0.0.1', port=free_port(), max_rate_hz=0)  # update on every step
    try:
        h1_env.reset()
        action = {'h1': {'move_by_speed': [0.5, 0.0, 0.3]}}
        for _ in range(5):
            h1_env.step([action] * 4)
        assert viewer.steps == 5
        origins = slot_origins(4, 4.0)
        packs = viewer._sync_packs()  # slot 0 (a camera) is a structure of its own, slots 1 and 2 another
        assert sorted(slot for _, nodes in packs for slot in nodes.slots) == [0, 1, 2]  # slot 3 is empty
        for pack, nodes in packs:
            for body, handle in nodes.handles:
                for row, slot in enumerate(nodes.slots):
                    position, orientation = pack.body_poses(slot)
                    assert np.allclose(handle.batched_positions[row], position[body] + origins[slot], atol=1e-5)
                    assert np.allclose(handle.batched_wxyzs[row], orientation[body], atol=1e-5)
        # slot 0's robot has a camera: the panel offers it and shows its last image
        assert viewer.camera.options == ('none', 'h1/camera') and viewer.camera.value == 'h1/camera'
        assert viewer.image.image.shape == (48, 64, 3)
        assert 'env step 5 · 3 of 4 slots running' in viewer.status.content
        h1_env.reset([1])  # a reset keeps the page in step too
        assert len(viewer._sync_packs()) == 2
    finally:
        h1_env.close()
    with pytest.raises(OSError):  # close() stopped the server
        socket.create_connection(('127.0.0.1', viewer.port), timeout=1).close()


def _screenshot(browser: Browser) -> np.ndarray:
    """The page as it is drawn now, RGB."""
    import imageio.v3 as iio

    png = base64.b64decode(browser.call('Page.captureScreenshot', format='png')['data'])
    return iio.imread(png, extension='.png')[..., :3]


@pytest.mark.xdist_group('browser')  # one headless Chromium at a time (see conftest.py)
@pytest.mark.slow
@pytest.mark.skipif(chromium() is None, reason='needs Chromium (the Debian package chromium; .ci/run installs it)')
def test_a_browser_draws_the_robots(h1_env):
    """Open the page in headless Chromium, following slot 0, with the robots hidden, then shown:
    the pixels that differ are the robot, in the middle of the 3D view."""
    pytest.importorskip('imageio')
    viewer = attach_viewer(h1_env, host='127.0.0.1', port=free_port())
    def show_robots(visible: bool) -> None:
        for nodes in viewer._packs.values():
            for _, handle in nodes.handles:
                handle.visible = visible

    # the 3D view beside the panel (right) and the browser's software-rendering notice (top left)
    view = (slice(160, HEIGHT), slice(0, WIDTH - 340))
    h1_env.reset()
    viewer.follow.value = 'slot 0'
    viewer.update(force=True)
    show_robots(False)
    browser = None
    with tempfile.TemporaryDirectory() as folder:
        try:
            browser = Browser(viewer.url, folder, width=WIDTH, height=HEIGHT)
            # The scene streams to the page (software WebGL: seconds, up to a minute on a loaded
            # machine): the floor is drawn once the view is no longer one colour.
            wait_for(lambda: _screenshot(browser)[view].std() > 10, 120, 'the floor drawn', interval=0.5)
            time.sleep(1.0)  # (and settled)
            hidden = _screenshot(browser)
            show_robots(True)

            def robot_pixels() -> tuple[np.ndarray] | None:
                shown = _screenshot(browser)
                robot = np.abs(shown[view].astype(int) - hidden[view].astype(int)).max(axis=-1) > 40
                return (robot,) if robot.mean() > 0.01 else None

            (robot,) = wait_for(robot_pixels, 120, 'the robots drawn', interval=0.5)
        finally:
            if browser is not None:
                browser.close()
    rows, cols = np.nonzero(robot)
    centre = (HEIGHT / 2 - 160, WIDTH / 2)  # the followed robot is where the camera looks
    assert abs(rows.mean() - centre[0]) < 150 and abs(cols.mean() - centre[1]) < 150, (rows.mean(), cols.mean())


def test_view_command_serves_a_config_and_steps_it(capsys):
    from internutopia import cli

    config = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'configs', 'h1_example.yaml')
    assert cli.main(['view', config, '--port', str(free_port()), '--speed', '0', '--steps', '20', '--set', 'env_num=1']) == 0
    err = capsys.readouterr().err
    assert '[internutopia] viewing ' in err and 'http://localhost:' in err
    assert cli.main(['view', config, '--set', 'env_nm=1']) == cli.EXIT_ERROR
    assert "unknown key 'env_nm'" in capsys.readouterr().err
