"""Teleoperation edge cases: the mocap HTTP endpoint answers every bad request with a clear 4xx
(and keeps serving), serves numpy frames, ends its connections at ``close``, says in one line that
its port is taken; the left thumb-little gesture holds the target (InternUtopia's clutch); a
terminal's escape sequences are not keys; the Franka demos run with a one-step budget and end in
one line without a mocap server."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

from internutopia.core.extras import missing_extra
from internutopia_extension.controllers.mocap_frames import frame_for_target, hand_keypoints
from internutopia_extension.interactions.keyboard import KeyboardInteraction
from internutopia_extension.interactions.motion_capture import MocapInteraction, MocapServer

needs_franka = pytest.mark.skipif(missing_extra('robot', 'FrankaRobot') is not None, reason='the franka extra is not installed')


def _request(server: MocapServer, method: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
    port = server._httpd.server_address[1]
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        connection.request(method, '/results', body=body, headers=headers or {})
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


@pytest.fixture
def server():
    with MocapServer(port=0) as server:
        yield server


@pytest.mark.parametrize(('body', 'headers', 'status', 'message'), [
    (b'[' * 5000 + b']' * 5000, None, 400, 'nested too deeply'),
    (b'{"rh_bones_kps": ' + b'[' * 3000 + b']' * 3000 + b'}', None, 400, 'nested too deeply'),
    # (one level past the server's limit, which every Python parses; and past every parser's own)
    (b'{"rh_bones_kps": ' + b'[' * 8 + b'0' + b']' * 8 + b'}', None, 400, 'nested too deeply'),
    (b'[' * 30000 + b']' * 30000, None, 400, 'nested too deeply'),
    (json.dumps({'rh_bones_kps': [[10 ** 400, 0, 0]] + [[0, 0, 0]] * 20}).encode(), None, 400, "'rh_bones_kps' must be 21 keypoints"),
    (b'{}', {'Content-Length': '-1'}, 400, 'Content-Length must be >= 0'),
])
def test_bad_posts_get_a_4xx_and_the_server_keeps_serving(server, body, headers, status, message):
    got_status, got = _request(server, 'POST', body, headers)
    assert got_status == status and message in got['message'], (got_status, got)
    ok = json.dumps(frame_for_target((0.1, 0.0, 0.0))).encode()
    assert _request(server, 'POST', ok) == (200, {'status': 'ok', 'message': 'frame received'})
    assert _request(server, 'GET')[0] == 200


def test_numpy_frames_are_served_as_json(server):
    frame = {key: np.asarray(value) for key, value in frame_for_target((0.05, 0.0, 0.0)).items()}
    server.put(frame)
    status, got = _request(server, 'GET')
    assert status == 200 and np.allclose(got['rh_bones_kps_cam'], frame['rh_bones_kps_cam'])
    client = MocapInteraction(server.url)
    assert np.allclose(client.step()['rh_global_orient'], frame['rh_global_orient'])


def test_a_failing_frame_source_is_a_500_not_a_dropped_connection():
    def frames():
        yield frame_for_target((0.0, 0.0, 0.0))
        raise RuntimeError('camera unplugged')

    with MocapServer(port=0, frames=frames()) as server:
        assert _request(server, 'GET')[0] == 200
        status, got = _request(server, 'GET')
        assert status == 500 and 'camera unplugged' in got['message'], got
        assert _request(server, 'GET')[0] == 200  # (the last frame again)


def test_close_ends_a_stalled_connection_and_its_thread():
    before = set(threading.enumerate())
    server = MocapServer(port=0)
    client = socket.create_connection(('127.0.0.1', server._httpd.server_address[1]), timeout=5)
    try:
        client.sendall(b'POST /results HTTP/1.0\r\nContent-Length: 100\r\n\r\n{')  # and then nothing
        for _ in range(100):
            if server._connections:
                break
            threading.Event().wait(0.02)
        server.close()
        assert set(threading.enumerate()) <= before
        assert client.recv(100) == b''  # the server hung up
    finally:
        client.close()


def test_the_server_command_says_in_one_line_that_its_port_is_taken(server):
    port = server._httpd.server_address[1]
    done = subprocess.run([sys.executable, '-m', 'internutopia_extension.interactions.motion_capture', '--port', str(port),
                           '--seconds', '1'], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert 'Address already in use' in done.stderr and 'Traceback' not in done.stderr, done.stderr


@pytest.mark.parametrize('sequence', [b'\x1bOP', b'\x1bOH', b'\x1bOF', b'\x1bOA', b'\x1b[1;5D', b'\x1b[15~'])
def test_terminal_escape_sequences_are_not_keys(sequence):
    read_end, write_end = os.pipe()
    keyboard = KeyboardInteraction(stream=read_end)
    try:
        os.write(write_end, sequence)
        assert keyboard.get_input().tolist() == [0.0] * 6
        os.write(write_end, sequence + b'u')
        assert keyboard.get_input().tolist() == [0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    finally:
        keyboard.close()
        os.close(read_end)
        os.close(write_end)


@needs_franka
def test_a_held_left_thumb_little_pinch_holds_the_target():
    """InternUtopia re-takes the wrist's reference before the frame's motion while the gesture is
    held: the right hand moves, the target does not (slot 0); without it the target follows (slot 1)."""
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions
    from internutopia_extension.configs.robots.mocap_controlled_franka import MocapControlledFrankaRobotCfg, teleop_cfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    import_extensions()
    franka = MocapControlledFrankaRobotCfg(position=(-0.35, 0.0, 1.05), controllers=[teleop_cfg])
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, metrics_save_path='none',
                     task_configs=[SingleInferenceTaskCfg(robots=[franka])] * 2))
    left = hand_keypoints(pinch=True, pinched_with=20)
    little = {'lh_bones_kps': left.tolist(), 'lh_bones_kps_cam': left.tolist()}

    def step(offset):
        frames = (frame_for_target(offset, scale=teleop_cfg.scale, left=little), frame_for_target(offset, scale=teleop_cfg.scale))
        obs, *_ = env.step([{franka.name: {teleop_cfg.name: [frame]}} for frame in frames])
        return [np.asarray(obs[slot][franka.name]['controllers'][teleop_cfg.name]['target_position']) for slot in (0, 1)]

    try:
        env.reset()
        for _ in range(13):  # held 12 frames before it acts
            start = step((0.0, 0.0, 0.0))
        end = step((0.1, 0.0, 0.0))
    finally:
        env.close()
    assert np.allclose(end[0], start[0]), (start, end)
    assert np.allclose(end[1] - start[1], (0.1, 0.0, 0.0)), (start, end)


@needs_franka
@pytest.mark.parametrize('name', ['franka_manipulation', 'franka_manipulation_mocap_teleop'])
def test_the_franka_demos_run_a_one_step_budget(name):
    import importlib

    demo = importlib.import_module(f'internutopia.demo.{name}')
    result = demo.main(['--steps', '1'])
    assert result['steps'] == 1 and result['recorded_steps'] == 1, result


def test_franka_manipulation_refuses_a_zero_phase():
    from internutopia.demo import franka_manipulation

    with pytest.raises(SystemExit) as exit_:
        franka_manipulation.main(['--phase-steps', '0'])
    assert exit_.value.code == 2


@needs_franka
def test_the_mocap_demo_without_a_server_ends_in_one_line():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    done = subprocess.run([sys.executable, '-m', 'internutopia.demo.franka_manipulation_mocap_teleop', '--source', 'http',
                           '--mocap-url', f'http://127.0.0.1:{port}', '--steps', '3'],
                          capture_output=True, text=True, timeout=300, env={**os.environ, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')})
    assert done.returncode == 1, done
    assert f'this demo cannot run: mocap server at http://127.0.0.1:{port} is not reachable' in done.stderr, done.stderr
    assert 'Traceback' not in done.stderr, done.stderr


@pytest.mark.parametrize('finger', [8, 12, 16, 20])
def test_a_synthetic_pinch_touches_one_fingertip_only(finger):
    """(Else a ring pinch of :func:`hand_keypoints` also fires the thumb-little gesture.)"""
    from internutopia_extension.controllers.mocap_frames import PINCH_DISTANCE

    kps = hand_keypoints(pinch=True, pinched_with=finger)
    near = [tip for tip in (8, 12, 16, 20) if np.linalg.norm(kps[4] - kps[tip]) < PINCH_DISTANCE]
    assert near == [finger]
    open_hand = hand_keypoints(pinch=False)
    assert all(np.linalg.norm(open_hand[4] - open_hand[tip]) > PINCH_DISTANCE for tip in (8, 12, 16, 20))
