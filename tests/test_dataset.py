"""Recording runs as LeRobot datasets, read back with LeRobot's own ``LeRobotDataset`` (offline).

One recorded run (Franka pick and place, two slots, two cameras, the scripted policy) is checked
against what the env returned: episode count, order and lengths, feature names and shapes, states
and actions value for value, camera frames within the video codec's error (PSNR). Failure paths:
failed and abandoned episodes are not saved, an exception mid-run and SIGINT/SIGKILL of
``internutopia run --record`` leave a dataset that loads with every episode saved before.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

pytest.importorskip('internutopia_extension.robots.franka')
pytest.importorskip('pyarrow')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Recorder  # noqa: E402
from internutopia.recording.reader import open_lerobot_dataset  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.robots.franka import front_camera_256_cfg, wrist_camera_256_cfg  # noqa: E402
from internutopia_extension.controllers.ik_controller import POSE  # noqa: E402
from internutopia_extension.policies import ScriptedPickPlace  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'examples'))
from franka_pick_place import random_episodes  # noqa: E402
from generate_demos import scripted_actions  # noqa: E402

SIZE = 64
#: The least PSNR (dB) of a decoded frame against the camera image: H.264 (crf 23, yuv420p: colour
#: at half resolution) measures 29.5-39 dB on these 64x64 frames (the red cube's edges cost most);
#: the frame next to the right one scores lower (checked below).
MIN_PSNR = 27.0


def _config(episodes: int, slots: int, max_steps: int | None = None, cameras: bool = True) -> Config:
    tasks = random_episodes(episodes, seed=3)
    sensors = [front_camera_256_cfg.update(resolution=(SIZE, SIZE), depth=False),
               wrist_camera_256_cfg.update(resolution=(SIZE, SIZE), depth=False)] if cameras else []
    tasks = [t.update(robots=[t.robots[0].update(sensors=sensors)], **({'max_steps': max_steps} if max_steps else {}))
             for t in tasks]
    return Config(simulator=SimConfig(physics_dt=1 / 30, rendering_dt=1 / 30, headless=True), env_num=slots,
                  env_offset_size=3.0, metrics_save_path='none', task_configs=tasks)


def _run(config: Config, root: str, keep_failed: bool = False, fail_after: int | None = None) -> dict:
    """Run ``config`` with the scripted policy, recording into ``root``; what the env returned per
    episode (observations, actions, infos) in the order episodes finished. ``fail_after``: raise
    ``RuntimeError`` once that many episodes have finished (a crash mid-run)."""
    import_extensions()
    seen: dict[int, dict] = {}
    finished: list[dict] = []
    with Env(config) as env:
        recorder = Recorder(root, keep_failed=keep_failed).attach(env)
        policy = ScriptedPickPlace(physics_dt=config.simulator.physics_dt)
        obs, infos = env.reset()
        targets = {slot: info.target for slot, info in enumerate(infos) if info is not None}
        live = {slot: {'obs': [obs[slot]], 'actions': [], 'prompt': infos[slot].prompt} for slot in targets}
        policy.reset(np.array(sorted(targets)), np.array([infos[s].goal_position for s in sorted(targets)]))
        while not env.finished:
            actions = scripted_actions(policy, obs, targets)
            obs, _, terminated, _, info = env.step(actions)
            for slot in list(live):
                live[slot]['actions'].append(actions[slot])
                if terminated[slot]:
                    finished.append({**live.pop(slot), 'info': info[slot]})
                else:
                    live[slot]['obs'].append(obs[slot])
            if fail_after is not None and len(finished) >= fail_after:
                raise RuntimeError('injected fault')
            ended = [slot for slot in range(env.env_num) if terminated[slot] and info[slot] is not None]
            if ended:
                new_obs, new_infos = env.reset(ended)
                for slot, slot_obs, slot_info in zip(ended, new_obs, new_infos, strict=True):
                    obs[slot] = slot_obs
                    if slot_info is not None:
                        targets[slot] = slot_info.target
                        live[slot] = {'obs': [slot_obs], 'actions': [], 'prompt': slot_info.prompt}
                        policy.reset(np.array([slot]), np.array([slot_info.goal_position]))
    seen['finished'] = finished
    seen['recorder'] = recorder
    return seen


def _leaf(obs: dict, name: str) -> float:
    """The value a state column name (``robot.path.i``) points at in an observation."""
    parts = name.split('.')
    node = obs
    for key in parts[:-1]:
        node = node[key]
    last = parts[-1]
    if last.isdigit() and not isinstance(node, dict):
        return float(np.ravel(node)[int(last)])
    return float(np.ravel(node[last])[0]) if isinstance(node, dict) else float(node)


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float('inf') if mse == 0 else float(10 * np.log10(255.0 ** 2 / mse))


@pytest.fixture(scope='module')
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, object]:
    root = str(tmp_path_factory.mktemp('dataset') / 'pick_place')
    seen = _run(_config(episodes=3, slots=2), root)
    return seen, open_lerobot_dataset(root)


def test_episodes_in_finishing_order_with_their_lengths(recorded: tuple) -> None:
    seen, dataset = recorded
    finished = seen['finished']
    assert all(f['info']['metrics']['success'] for f in finished)  # the scripted policy places every cube
    assert dataset.num_episodes == len(finished) == 3
    episodes = dataset.meta.episodes
    assert list(episodes['run_episode_index']) == [f['info']['episode_index'] for f in finished]
    assert list(episodes['length']) == [f['info']['steps'] for f in finished] == [len(f['actions']) for f in finished]
    assert dataset.num_frames == sum(len(f['actions']) for f in finished)
    assert list(dataset.meta.tasks.index) == ['put the red cube on the green marker']


def test_feature_names_and_shapes(recorded: tuple) -> None:
    _, dataset = recorded
    features = dataset.features
    for key in ('observation.state', 'observation.environment_state', 'action', 'observation.images.front_camera',
                'observation.images.wrist_camera', 'next.reward', 'next.done', 'next.success', 'run_episode_index'):
        assert key in features, key
    state_names = features['observation.state']['names']
    for name in ('franka.joint_positions.0', 'franka.joint_velocities.8', 'franka.position.2', 'franka.eef_orientation.3',
                 'franka.controllers.gripper_controller.gripper_pos.1'):
        assert name in state_names
    # the IK controller receives x, y, z, a unit wxyz quaternion and its mode (ik_controller.POSE)
    assert features['action']['names'] == [f'franka.arm_ik_controller.{i}' for i in range(8)] + ['franka.gripper_controller']
    assert 'objects.cube.position.0' in features['observation.environment_state']['names']
    item = dataset[0]
    assert tuple(item['observation.state'].shape) == (len(state_names),)
    assert tuple(item['action'].shape) == (9,)
    assert tuple(item['observation.images.front_camera'].shape) == (3, SIZE, SIZE)
    assert item['task'] == 'put the red cube on the green marker'


def test_states_and_actions_equal_what_the_env_returned(recorded: tuple) -> None:
    seen, dataset = recorded
    names = dataset.features['observation.state']['names']
    env_names = dataset.features['observation.environment_state']['names']
    table = dataset.hf_dataset.with_format('numpy')
    for index, episode in enumerate(seen['finished']):
        rows = table.select(range(int(dataset.meta.episodes['dataset_from_index'][index]),
                                  int(dataset.meta.episodes['dataset_to_index'][index])))
        states, env_states, actions = (np.stack(rows[k]) for k in ('observation.state', 'observation.environment_state', 'action'))
        expected = np.array([[_leaf(o, n) for n in names] for o in episode['obs']], np.float32)
        np.testing.assert_array_equal(states, expected)
        np.testing.assert_array_equal(env_states, np.array([[_leaf(o, n) for n in env_names] for o in episode['obs']], np.float32))
        sent = np.array([[*a['franka']['arm_ik_controller'][0],
                          *np.divide(a['franka']['arm_ik_controller'][1], np.linalg.norm(a['franka']['arm_ik_controller'][1])),
                          POSE, 1.0 if a['franka']['gripper_controller'] == ['open'] else 0.0] for a in episode['actions']],
                        np.float32)
        np.testing.assert_allclose(actions, sent, rtol=0, atol=1e-6)
        done = np.asarray(rows['next.done'])
        assert done[-1] and not done[:-1].any()
        assert set(np.asarray(rows['env_slot']).tolist()) == {episode['info'].get('slot', rows['env_slot'][0])}


def test_decoded_frames_match_the_cameras(recorded: tuple) -> None:
    seen, dataset = recorded
    psnrs = []
    for index, episode in enumerate(seen['finished'][:2]):
        start = int(dataset.meta.episodes['dataset_from_index'][index])
        for t in (0, len(episode['obs']) // 2, len(episode['obs']) - 1):
            item = dataset[start + t]
            for camera in ('front_camera', 'wrist_camera'):
                decoded = (item[f'observation.images.{camera}'].numpy().transpose(1, 2, 0) * 255).round().astype(np.uint8)
                truth = episode['obs'][t]['franka']['sensors'][camera]['rgba'][..., :3]
                psnrs.append(_psnr(decoded, truth))
                # not just any frame of the episode: the right one beats its neighbours
                if 0 < t < len(episode['obs']) - 1:
                    other = episode['obs'][t + 1 if t == 0 else 0]['franka']['sensors'][camera]['rgba'][..., :3]
                    assert _psnr(decoded, truth) > _psnr(decoded, other)
    assert min(psnrs) > MIN_PSNR, psnrs


def test_failed_and_abandoned_episodes_are_not_saved(tmp_path: object) -> None:
    root = os.path.join(str(tmp_path), 'short')
    # Episodes cut at 20 steps never place their cube: dropped by default, kept and marked on request.
    seen = _run(_config(episodes=2, slots=2, max_steps=20, cameras=False), root)
    assert seen['recorder'].episodes_saved == 0 and seen['recorder'].episodes_dropped == 2
    assert json.load(open(os.path.join(root, 'meta', 'info.json')))['total_episodes'] == 0
    kept = os.path.join(str(tmp_path), 'kept')
    seen = _run(_config(episodes=2, slots=2, max_steps=20, cameras=False), kept, keep_failed=True)
    dataset = open_lerobot_dataset(kept)
    assert dataset.num_episodes == 2 and list(dataset.meta.episodes['success']) == [False, False]
    assert not np.asarray(dataset.hf_dataset.with_format('numpy')['next.success']).any()
    # A slot reset while its episode runs: that episode is abandoned, the next one is recorded.
    import_extensions()
    abandoned = os.path.join(str(tmp_path), 'abandoned')
    with Env(_config(episodes=2, slots=1, max_steps=5, cameras=False)) as env:
        recorder = Recorder(abandoned, keep_failed=True).attach(env)
        env.reset()
        for _ in range(3):
            env.step([None])
        env.reset([0])
        while not env.finished:
            env.step([None])
    assert (recorder.episodes_saved, recorder.episodes_dropped, recorder.saved_run_indices) == (1, 1, [1])
    assert open_lerobot_dataset(abandoned).num_episodes == 1


def test_bad_folder_is_refused_before_anything_runs(tmp_path: object) -> None:
    taken = os.path.join(str(tmp_path), 'taken')
    os.makedirs(taken)
    open(os.path.join(taken, 'x'), 'w').close()
    with pytest.raises(FileExistsError, match='not empty'):
        Recorder(taken)
    from internutopia.cli import ConfigError, run

    with pytest.raises(ConfigError, match='--record: .*not empty'):
        run(os.path.join(os.path.dirname(__file__), '..', 'configs', 'jetbot_point_nav.yaml'), steps=1, record=taken,
            results=os.path.join(str(tmp_path), 'r.jsonl'), progress=False)
    assert os.listdir(taken) == ['x']


def test_the_command_line_summary_says_how_many_episodes_were_left_out(tmp_path: object, capsys) -> None:
    from internutopia.cli import main

    root = os.path.join(str(tmp_path), 'ds')
    config = os.path.join(os.path.dirname(__file__), '..', 'configs', 'jetbot_point_nav.yaml')
    # Two steps: none of the 8 running episodes finishes; at the end they are abandoned, not recorded.
    assert main(['run', config, '--steps', '2', '--record', root, '--no-progress',
                 '--results', os.path.join(str(tmp_path), 'r.jsonl')]) == 0
    assert f'dataset: {root} (0 episodes recorded; 8 left out: failed, abandoned or without success)' in capsys.readouterr().out
    # A run stopped before its first step (Ctrl-C) wrote no dataset: the summary says so, not a path.
    from internutopia.cli.run_command import _print_summary

    _print_summary({'episodes_finished': 0, 'episodes_total': 8, 'interrupted': True, 'steps': 0, 'env_steps': 0,
                    'wall_s': 0.1, 'env_steps_per_s': 0.0, 'metrics_mean': {}, 'results': 'r.jsonl',
                    'dataset': os.path.join(str(tmp_path), 'never'), 'dataset_episodes': 0, 'dataset_left_out': 0})
    assert f"dataset: none written to {os.path.join(str(tmp_path), 'never')} (no step was recorded)" in capsys.readouterr().out


@pytest.mark.slow
def test_a_crash_mid_run_leaves_the_episodes_saved_before_it(tmp_path: object) -> None:
    root = os.path.join(str(tmp_path), 'crash')
    with pytest.raises(RuntimeError, match='injected fault'):
        _run(_config(episodes=4, slots=2, cameras=True), root, fail_after=2)
    dataset = open_lerobot_dataset(root)
    assert dataset.num_episodes == 2
    assert not os.path.exists(os.path.join(root, '.staging'))  # running episodes' videos removed
    dataset[dataset.num_frames - 1]  # the last frame decodes


CLI_CONFIG = """
simulator: {physics_dt: 0.02, rendering_dt: 0.02, headless: true}
env_num: 2
env_offset_size: 5.0
metrics_save_path: none
task_configs:
"""


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGKILL])
def test_cli_record_stopped_by_a_signal_leaves_a_loadable_dataset(tmp_path: object, sig: int) -> None:
    episode = textwrap.dedent("""\
    - type: FiniteStepTask
      max_steps: 15
      robots:
      - {type: JetbotRobot, name: jetbot, position: [0.0, 0.0, 0.05],
         controllers: [{type: DifferentialDriveController, name: move_by_speed, wheel_base: 0.1125, wheel_radius: 0.03}],
         sensors: [{type: RepCamera, name: camera, prim_path: chassis/Camera, resolution: [32, 32]}]}
    """)
    config = os.path.join(str(tmp_path), 'run.yaml')
    with open(config, 'w') as f:
        f.write(CLI_CONFIG + textwrap.indent(episode, '') * 400)
    root = os.path.join(str(tmp_path), 'cli')
    env = {**os.environ, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')}
    process = subprocess.Popen([sys.executable, '-m', 'internutopia.cli', 'run', config, '--record', root, '--no-progress',
                                '--json', '--results', os.path.join(str(tmp_path), 'r.jsonl')],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    info_path = os.path.join(root, 'meta', 'info.json')
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if os.path.exists(info_path) and json.load(open(info_path))['total_episodes'] >= 4:
            break
        time.sleep(0.2)
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    dataset = open_lerobot_dataset(root)
    assert 4 <= dataset.num_episodes < 400
    # info.json is written last: a kill between an episode's files and it leaves that episode's
    # (complete) files present and not yet counted; every counted episode is whole
    rows = len(dataset.meta.episodes)
    assert rows == dataset.num_episodes or (sig == signal.SIGKILL and rows == dataset.num_episodes + 1)
    assert list(dataset.meta.episodes['length']) == [15] * rows
    dataset[dataset.num_frames - 1]
    if sig == signal.SIGINT:
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary['interrupted'] and summary['dataset_episodes'] == dataset.num_episodes, err


@pytest.mark.parametrize('fault', ['killed', 'killed with its queue full', 'stopped'])
def test_a_dead_or_hung_writer_is_an_error_not_a_hang(tmp_path: object, fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer process killed (out of memory, a crash) or stopped for good while the env steps:
    the next send (or, with its queue full, the send waiting for room) raises saying so, a hung
    writer is killed after ``_STALL_S`` without progress, and the env still closes."""
    from internutopia.recording import writer as writer_module
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    from internutopia_extension.configs.sensors import RepCameraCfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    monkeypatch.setattr(writer_module, '_STALL_S', 2.0)
    import_extensions()
    still = [{'jetbot': {'move_by_speed': [0.0, 0.0]}}]  # (a command: the recording's layout needs one)
    camera = RepCameraCfg(name='camera', prim_path='chassis/Camera', resolution=(16, 16))
    robot = JetbotRobotCfg()
    robot = robot.update(sensors=[camera], controllers=[c for c in robot.controllers if c.name == 'move_by_speed'])
    task = FiniteStepTaskCfg(max_steps=10_000, robots=[robot])
    config = Config(simulator=SimConfig(physics_dt=1 / 60, rendering_dt=1 / 60, headless=True), env_num=1,
                    metrics_save_path='none', task_configs=[task])
    env = Env(config)
    recorder = Recorder(os.path.join(str(tmp_path), 'dead'), keep_failed=True).attach(env)
    env.reset()
    env.step(still)  # the layout is made and the writer started on the first step
    writer = recorder._writer
    assert writer is not None and writer._process.is_alive()
    if fault == 'killed':
        os.kill(writer._process.pid, signal.SIGKILL)
        writer._process.join(10)
        expected = r'died \(exit code -9\)'
    else:
        os.kill(writer._process.pid, signal.SIGSTOP)  # it stops reading: the queue fills up
        for _ in range(80):  # (max_queue is 64: then a send waits)
            if writer._jobs.full():
                break
            env.step(still)
        assert writer._jobs.full()
        if fault == 'stopped':
            expected = r'made no progress for 2 s \(stopped or hung\) and was killed'
        else:
            threading.Timer(1.0, os.kill, (writer._process.pid, signal.SIGKILL)).start()
            expected = r'died \(exit code -9\)'
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r'dataset writer of .*dead ' + expected):
        for _ in range(200):
            env.step(still)
    assert time.monotonic() - started < 15
    with pytest.warns(UserWarning, match='recording to .* failed'):
        env.close()  # the world is released; the recorder warns (it has nothing more to save)
    assert not writer._process.is_alive()


def test_a_close_waiting_on_a_stopped_writer_kills_it(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """``close`` waits for the queued saves while the writer works; one that stopped working is
    killed after ``_STALL_S`` without progress, and the close raises saying so."""
    from internutopia.recording import writer as writer_module
    from internutopia.recording.writer import DatasetWriter

    monkeypatch.setattr(writer_module, '_STALL_S', 1.0)
    writer = DatasetWriter(os.path.join(str(tmp_path), 'stalled'), {}, [], 30.0)
    writer.flush()  # (nothing queued: returns at once; the worker may still be starting)
    os.kill(writer._process.pid, signal.SIGSTOP)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r'made no progress for 1 s \(stopped or hung\) and was killed'):
        writer.close()
    assert time.monotonic() - started < 10 and not writer._process.is_alive()
