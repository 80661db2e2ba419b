"""Recording runs of the array API (``env.step_arrays``/``env.reset_arrays``) and of the Gymnasium
vector envs: the dataset on disk, read back with LeRobot's reader, holds each episode as it ran.

Every episode drives at speeds that name it (``recording_helpers.speed``), so each frame's action says which episode
and step it came from; states are compared with the observations the env returned.
"""

from __future__ import annotations

import signal

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip('pyarrow')

import internutopia  # noqa: E402,F401  (registers the Gymnasium ids)
from internutopia.core.config import Config  # noqa: E402
from internutopia.core.task.base import BaseTask  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Recorder  # noqa: E402
from internutopia.recording.reader import open_lerobot_dataset  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_by_speed_cfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.tasks.finite_step import FiniteStepTask  # noqa: E402
from tests.recording_helpers import jetbot_config, speed  # noqa: E402

#: Run inside the next task step (a Ctrl-C), then forgotten.
IN_STEP: list = []


class ArraysTaskCfg(FiniteStepTaskCfg):
    type: str = 'RecordingArraysTask'


@BaseTask.register('RecordingArraysTask')
class ArraysTask(FiniteStepTask):
    def step(self, slots):
        while IN_STEP:
            IN_STEP.pop()()
        return super().step(slots)


def _config(count: int, env_num: int, steps: int = 4) -> Config:
    return jetbot_config(count, env_num, steps, ArraysTaskCfg)


@pytest.fixture(autouse=True)
def _no_hooks_left():
    IN_STEP.clear()
    yield
    IN_STEP.clear()


def _batch(env: Env) -> dict:
    """Every running slot's speed for its episode's next step (others: zeros)."""
    speeds = np.zeros((env.env_num, 2))
    for slot in env.active_slots:
        speeds[slot, 0] = speed(int(env.runner.episodes[slot].index), int(env.runner.table.steps[slot]))
    return {'jetbot': {'move_by_speed': speeds}}


def _dataset(root: str) -> list[dict]:
    """Each saved episode, in dataset order: run index, slot, speeds, done flags, positions, fps."""
    dataset = open_lerobot_dataset(root)
    table = dataset.hf_dataset.with_format('numpy')
    names = dataset.features['observation.state']['names']
    at = names.index('jetbot.position.0')
    episodes = dataset.meta.episodes
    out = []
    for index in range(dataset.num_episodes):
        rows = table.select(range(int(episodes['dataset_from_index'][index]), int(episodes['dataset_to_index'][index])))
        out.append({'run': int(episodes['run_episode_index'][index]), 'slot': int(episodes['env_slot'][index]),
                    'speeds': np.round(np.stack(rows['action'])[:, 0].astype(float), 3).tolist(),
                    'done': np.asarray(rows['next.done']).tolist(),
                    'positions': np.stack(rows['observation.state'])[:, at:at + 3], 'fps': dataset.fps})
    return out


def _whole(episode: dict, steps: int = 4) -> bool:
    return (episode['speeds'] == [speed(episode['run'], t) for t in range(steps)]
            and episode['done'] == [False] * (steps - 1) + [True])


# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('api', ['arrays', 'mixed'])
def test_array_api_runs_are_recorded_frame_for_frame(tmp_path, api):
    """``step_arrays`` with ``reset_list`` (an autoreset loop) and ``reset_arrays``, alone or mixed
    with ``env.step``: every episode is saved whole, each frame's state the position the call
    returned before that frame's action."""
    root = str(tmp_path / 'ds')
    seen: dict[tuple[int, int], np.ndarray] = {}  # (run, step) -> the position its action was chosen from
    with Env(_config(5, env_num=2)) as env:
        recorder = Recorder(root).attach(env)
        obs, _ = env.reset_arrays()
        for slot in range(2):
            seen[(int(env.runner.episodes[slot].index), 0)] = obs['jetbot']['position'][slot].copy()
        calls = 0
        while not env.finished:
            idle = [slot for slot in range(2) if slot not in env.active_slots]
            if api == 'mixed' and calls % 2:
                if idle:
                    env.reset(idle)
                    for slot in idle:
                        if env.runner.episodes[slot] is not None and slot in env.active_slots:
                            seen[(int(env.runner.episodes[slot].index), 0)] = env.get_observations()[slot]['jetbot']['position']
                batch = _batch(env)['jetbot']['move_by_speed']
                result = env.step([{'jetbot': {'move_by_speed': batch[s]}} for s in range(2)])
                positions = {slot: result[0][slot]['jetbot']['position'] for slot in env.active_slots}
            else:
                out = env.step_arrays(_batch(env), reset_list=idle or None)
                positions = {slot: out.obs['jetbot']['position'][slot].copy() for slot in env.active_slots}
            for slot, position in positions.items():
                seen[(int(env.runner.episodes[slot].index), int(env.runner.table.steps[slot]))] = position
            calls += 1
    assert recorder.saved_run_indices == sorted(recorder.saved_run_indices) and recorder.episodes_saved == 5
    episodes = _dataset(root)
    assert sorted(e['run'] for e in episodes) == [0, 1, 2, 3, 4] and all(_whole(e) for e in episodes)
    assert sorted(e['slot'] for e in episodes) == [0, 0, 0, 1, 1] and {e['fps'] for e in episodes} == {60}
    for episode in episodes:
        want = np.stack([seen[(episode['run'], t)] for t in range(4)])
        np.testing.assert_allclose(episode['positions'], want, atol=1e-6)
        assert np.ptp(want[:, 0]) > 1e-5  # (it moved: the frames are not one state repeated)


def test_a_ctrl_c_in_an_array_step_still_reaches_the_recording(tmp_path):
    root = str(tmp_path / 'ds')
    with Env(_config(2, env_num=1)) as env:
        recorder = Recorder(root).attach(env)
        env.reset_arrays()
        interrupted = 0
        while not env.finished:
            if not env.active_slots:
                env.reset_arrays()
            if env.runner.table.steps[0] == 1:  # the second step of each episode
                IN_STEP.append(lambda: signal.raise_signal(signal.SIGINT))
            try:
                env.step_arrays(_batch(env))
            except KeyboardInterrupt:
                interrupted += 1
    assert interrupted == 2 and recorder.saved_run_indices == [0, 1]
    assert all(_whole(e) for e in _dataset(root))


def test_steps_out_of_the_recordings_sight_are_not_saved(tmp_path):
    """A step the recording does not see (the runner stepped directly) and a step of another
    ``repeat`` than the recording's: those episodes are dropped with a warning, the next saved."""
    root = str(tmp_path / 'ds')
    with Env(_config(4, env_num=1)) as env:
        recorder = Recorder(root).attach(env)
        env.reset_arrays()
        env.step_arrays(_batch(env))
        env.runner.step_arrays(_batch(env))  # episode 0: a step below the env
        with pytest.warns(UserWarning, match=r'episode 0 \(slot 0\) ran steps, ended or was replaced .*not saved'):
            env.step_arrays(_batch(env))
        env.reset_arrays([0])  # episode 1: a frame of two physics steps in a recording of one
        with pytest.warns(UserWarning, match=r'a step of repeat=2 in a recording of 1 physics step\(s\) per frame'):
            env.step_arrays(_batch(env), repeat=2)
        while not env.finished:  # episodes 2 and 3, seen whole
            env.step_arrays(_batch(env), reset_list=[0] if not env.active_slots else None)
    assert recorder.saved_run_indices == [2, 3] and recorder.episodes_dropped == 2
    assert all(_whole(e) for e in _dataset(root))


def test_observe_false_is_recorded_with_the_observations(tmp_path):
    """``step_arrays(observe=False)`` leaves rows unobserved; with a recorder attached every slot is
    observed all the same (its frames need them), and the dataset's states are the real positions."""
    root = str(tmp_path / 'ds')
    with Env(_config(1, env_num=1, steps=6)) as env:
        recorder = Recorder(root).attach(env)
        env.reset_arrays()
        for _ in range(6):
            out = env.step_arrays(_batch(env), observe=False)
        final = out.obs['jetbot']['position'][0]
    (episode,) = _dataset(root)
    assert recorder.episodes_saved == 1 and _whole(episode, steps=6)
    assert np.all(np.diff(episode['positions'][:, 0]) > 0) and final[0] > episode['positions'][-1, 0]


@pytest.mark.parametrize('autoreset_mode', ['NextStep', 'SameStep'])
def test_a_gymnasium_vector_env_is_recorded_as_it_stepped(tmp_path, autoreset_mode):
    """``Recorder.attach`` takes a Gymnasium vector env (through its wrappers): a frame per vector
    step (its action repeat of physics steps, the dataset's fps), each frame the observation the
    env returned, the action it was given and the reward it returned. A first ``reset()`` without a
    seed takes its episodes again (the construction's reset ran before the recorder could see
    them), so they are recorded too."""
    root = str(tmp_path / 'ds')
    envs = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2, obs_mode='dict', max_steps=30,
                     autoreset_mode=autoreset_mode))
    recorder = Recorder(root, keep_failed=True).attach(envs)
    repeat = envs.unwrapped.action_repeat
    rng = np.random.default_rng(0)
    running: list[list] = [[], []]  # per env: (observation, action, reward) of its episode so far
    finished: list[tuple[int, list]] = []
    try:
        obs, _ = envs.reset(seed=1) if autoreset_mode == 'NextStep' else envs.reset()
        fresh = [True, True]
        for _ in range(25):
            actions = rng.uniform(-0.4, 0.4, (2, 2)).astype(np.float32)
            before = {key: value.copy() for key, value in obs.items()}
            obs, reward, terminated, truncated, info = envs.step(actions)
            for env in range(2):
                if not fresh[env]:  # (NextStep: this step reset the env, no action taken)
                    fresh[env] = True
                    continue
                running[env].append((before['robot.position'][env], actions[env], reward[env]))
                if terminated[env] or truncated[env]:
                    finished.append((env, running[env]))
                    running[env] = []
                    fresh[env] = autoreset_mode == 'SameStep'
    finally:
        envs.close()
    episodes = _dataset(root)
    dataset = open_lerobot_dataset(root)
    table = dataset.hf_dataset.with_format('numpy')
    assert len(finished) >= 4 and recorder.episodes_saved == len(episodes) == len(finished)
    assert {e['fps'] for e in episodes} == {round(60 / repeat)} and repeat > 1
    for env in range(2):
        theirs = [frames for slot, frames in finished if slot == env]
        ours = sorted((e for e in episodes if e['slot'] == env), key=lambda e: e['run'])
        assert len(ours) == len(theirs)
        for episode, frames in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(episode['positions'], np.stack([f[0] for f in frames]), atol=1e-6)
            index = [i for i in range(dataset.num_episodes) if int(dataset.meta.episodes['run_episode_index'][i]) == episode['run']][0]
            rows = table.select(range(int(dataset.meta.episodes['dataset_from_index'][index]),
                                      int(dataset.meta.episodes['dataset_to_index'][index])))
            np.testing.assert_allclose(np.stack(rows['action']), np.stack([f[1] for f in frames]), atol=1e-6)
            np.testing.assert_allclose(np.asarray(rows['next.reward']), [f[2] for f in frames], rtol=1e-5, atol=1e-6)


def test_an_array_step_raised_after_by_episode_errors_raise_still_reaches_the_recording(tmp_path, monkeypatch):
    """With ``episode_errors='raise'`` a slot's error is raised once the array step is complete (the
    error carries the step's result): the other slot's frame of that step is recorded all the same,
    and the failed episode is not saved."""
    root = str(tmp_path / 'ds')
    config = _config(4, env_num=2).model_copy(update={'episode_errors': 'raise'})
    broke: list[bool] = []

    def step(self, slots):
        if 0 in slots.tolist() and not broke and env.runner.table.steps[0] == 2:  # episode 0's second step
            if len(slots) == 1:  # (with the other slot, then alone: the failure is slot 0's own)
                broke.append(True)
            raise ValueError('slot 0 breaks')
        return FiniteStepTask.step(self, slots)

    monkeypatch.setattr(ArraysTask, 'step', step)
    raised = 0
    with Env(config) as env:
        recorder = Recorder(root).attach(env)
        env.reset_arrays()
        while not env.finished:
            idle = [slot for slot in range(2) if slot not in env.active_slots]
            try:
                env.step_arrays(_batch(env), reset_list=idle or None)
            except ValueError as exc:
                assert str(exc) == 'slot 0 breaks'
                raised += 1
    assert raised == 1 and broke and recorder.episodes_dropped == 1
    episodes = _dataset(root)
    assert sorted(e['run'] for e in episodes) == [1, 2, 3] and all(_whole(e) for e in episodes)


def test_episodes_running_before_the_recorder_was_attached_are_warned_about(tmp_path):
    root = str(tmp_path / 'ds')
    with Env(_config(4, env_num=2)) as env:
        env.reset_arrays()
        env.step_arrays(_batch(env))
        recorder = Recorder(root).attach(env)
        with pytest.warns(UserWarning, match=r'slot\(s\) \[0, 1\] started before the recorder was attached and are not recorded'):
            env.step_arrays(_batch(env))
        while not env.finished:
            idle = [slot for slot in range(2) if slot not in env.active_slots]
            env.step_arrays(_batch(env), reset_list=idle or None)
    assert sorted(recorder.saved_run_indices) == [2, 3] and recorder.episodes_dropped == 0
    assert all(_whole(e) for e in _dataset(root))


@pytest.mark.parametrize('kind', ['single env', 'SB3 bridge'])
def test_a_single_gymnasium_env_and_the_sb3_bridge_are_recorded(tmp_path, kind):
    """``attach`` finds the ``vec_env.Env`` under ``gym.make``'s env and under ``sb3_vec_env``: every
    episode that ends is saved, a frame per step it took."""
    from internutopia.core.gym_vector import sb3_vec_env

    root = str(tmp_path / 'ds')
    rng = np.random.default_rng(0)
    lengths: list[int] = []
    if kind == 'single env':
        env = gym.make('internutopia/JetbotPointNav-v0', max_steps=30)
        recorder = Recorder(root, keep_failed=True).attach(env)
        env.reset(seed=0)
        steps = 0
        for _ in range(16):
            steps += 1
            _, _, terminated, truncated, _ = env.step(rng.uniform(-0.4, 0.4, 2).astype(np.float32))
            if terminated or truncated:
                lengths.append(steps)
                steps = 0
                env.reset()
        env.close()
    else:
        venv = sb3_vec_env(gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2, autoreset_mode='SameStep', max_steps=30))
        recorder = Recorder(root, keep_failed=True).attach(venv)
        venv.reset()
        steps = np.zeros(2, dtype=int)
        for _ in range(12):
            steps += 1
            _, _, dones, _ = venv.step(rng.uniform(-0.4, 0.4, (2, 2)).astype(np.float32))
            lengths += steps[dones].tolist()
            steps[dones] = 0
        venv.close()
    dataset = open_lerobot_dataset(root)
    assert len(lengths) >= 3 and recorder.episodes_saved == len(lengths) == dataset.num_episodes
    assert sorted(int(n) for n in dataset.meta.episodes['length']) == sorted(lengths)


def test_camera_frames_of_an_array_run_are_the_images_it_returned(tmp_path):
    """A camera's images, read row by row from ``step_arrays``' arrays, are the dataset's video
    frames: each decoded frame is within the codec's error of the image the call returned
    (PSNR above 27 dB, as for the dict API's recordings), and nearer to it than to the image of
    the other slot, whose red cube stands behind its robot instead of in front of it."""
    from internutopia_extension.configs.objects import VisualCubeCfg
    from internutopia_extension.configs.robots.jetbot import jetbot_camera_cfg

    root = str(tmp_path / 'ds')
    camera = jetbot_camera_cfg.update(resolution=(64, 48), depth=False)
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.05), controllers=[move_by_speed_cfg], sensors=[camera])
    config = _config(2, env_num=2).model_copy(update={'task_configs': [
        ArraysTaskCfg(max_steps=4, robots=[robot], objects=[
            VisualCubeCfg(name='cube', position=(x, 0.0, 0.1), scale=(0.2, 0.2, 0.2), color=(1.0, 0.0, 0.0))])
        for x in (0.4, -0.6)]})
    images: dict[tuple[int, int], np.ndarray] = {}  # (slot, frame) -> the image its action was chosen from
    with Env(config) as env:
        recorder = Recorder(root).attach(env)
        obs, _ = env.reset_arrays()
        for t in range(4):
            for slot in range(2):
                images[(slot, t)] = obs['jetbot']['sensors'][camera.name]['rgba'][slot, ..., :3].copy()
            obs = env.step_arrays(_batch(env)).obs
    assert recorder.episodes_saved == 2
    dataset = open_lerobot_dataset(root)
    key = f'observation.images.{camera.name}'
    assert dataset.features[key]['shape'][:2] == (48, 64)
    for index in range(2):
        slot = int(dataset.meta.episodes['env_slot'][index])
        start = int(dataset.meta.episodes['dataset_from_index'][index])
        for t in (0, 3):
            decoded = (dataset[start + t][key].numpy().transpose(1, 2, 0) * 255).round().astype(np.uint8)
            own, other = _psnr(decoded, images[(slot, t)]), _psnr(decoded, images[(1 - slot, t)])
            assert own > 27.0 and own > other + 3.0, (own, other)


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float('inf') if mse == 0 else float(10 * np.log10(255.0 ** 2 / mse))
