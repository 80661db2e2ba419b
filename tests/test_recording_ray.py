"""Recording a Ray-distributed env: the dataset holds every episode as a one-process recording of
the same episodes does (the runners parse each step's commands and send them back while recorded).

Every episode drives at speeds that name it (``recording_helpers.speed``), so each frame's action says which episode
and step it came from.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip('pyarrow')
pytest.importorskip('ray')

from internutopia.core.distribution import RayDistributionCfg  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Recorder  # noqa: E402
from internutopia.recording.reader import open_lerobot_dataset  # noqa: E402
from tests.recording_helpers import jetbot_config, speed  # noqa: E402

#: (Each test joins a local Ray of its own: run with the other Ray tests, one cluster at a time.)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('ray'), pytest.mark.usefixtures('local_ray')]

STEPS = 4


def _index_of(env: Env, slot: int) -> int:
    """Queue index of the episode ``slot`` runs."""
    return int(env.slot_episodes[slot] if env.is_remote else env.runner.episodes[slot].index)


def _drive(env: Env, steps: dict[int, int]) -> bool:
    """Step ``env`` until its queue is done, each running slot given its episode's next speed
    (``steps``: each slot's steps so far); whether a step reported a runner that failed."""
    failed_seen = False
    while not env.finished:
        running = {slot: _index_of(env, slot) for slot in env.active_slots}
        action = [{'jetbot': {'move_by_speed': (speed(running[slot], steps[slot]), 0.0)}} if slot in running else None
                  for slot in range(env.env_num)]
        _, _, terminated, truncated, info = env.step(action)
        failed_seen = failed_seen or any(entry and entry.get('runner_failed') for entry in info)
        ended = [slot for slot in running if terminated[slot] or truncated[slot]]
        steps = {slot: steps[slot] + 1 for slot in running if slot not in ended}
        if ended:
            env.reset(ended)
            steps.update(dict.fromkeys([slot for slot in ended if slot in env.active_slots], 0))
    return failed_seen


def _run(env: Env, root: str) -> Recorder:
    """Every episode of ``env``'s queue, recorded to ``root``."""
    recorder = Recorder(root).attach(env)
    env.reset()
    _drive(env, dict.fromkeys(env.active_slots, 0))
    recorder.close()
    return recorder


def _episodes(root: str) -> tuple[dict[int, dict], dict]:
    """Each saved episode by run index (speeds, done flags, positions from its first frame), and the
    dataset's features and robot type."""
    dataset = open_lerobot_dataset(root)
    table = dataset.hf_dataset.with_format('numpy')
    names = dataset.features['observation.state']['names']
    at = names.index('jetbot.position.0')
    meta = dataset.meta.episodes
    out = {}
    for index in range(dataset.num_episodes):
        rows = table.select(range(int(meta['dataset_from_index'][index]), int(meta['dataset_to_index'][index])))
        positions = np.stack(rows['observation.state'])[:, at:at + 3]
        out[int(meta['run_episode_index'][index])] = {
            'speeds': np.round(np.stack(rows['action'])[:, 0].astype(float), 3).tolist(),
            'done': np.asarray(rows['next.done']).tolist(), 'moved': positions - positions[0]}
    return out, {'features': {k: v.get('names') for k, v in dataset.features.items()}, 'robot': dataset.meta.robot_type,
                 'fps': dataset.fps}


def test_a_ray_run_is_recorded_as_one_process_records_it(tmp_path):
    """Five episodes on two Ray runners of one slot each, and on one process of two slots: the same
    episodes saved whole (each frame's action the speed sent, the last frame done), the same
    columns, robot type and fps, and the same motion frame by frame."""
    local = _run(Env(jetbot_config(5, env_num=2, steps=STEPS)), str(tmp_path / 'local'))
    distributed = Env(jetbot_config(5, env_num=1, steps=STEPS).distribute(RayDistributionCfg(proc_num=2)))
    remote = _run(distributed, str(tmp_path / 'ray'))
    distributed.close()
    assert local.episodes_saved == remote.episodes_saved == 5
    assert remote.episodes_dropped == 0 and remote.saves_failed == 0
    mine, about = _episodes(str(tmp_path / 'ray'))
    theirs, about_local = _episodes(str(tmp_path / 'local'))
    assert about == about_local and about['robot'] == 'JetbotRobot' and about['fps'] == 60
    assert sorted(mine) == sorted(theirs) == [0, 1, 2, 3, 4]
    for run, episode in mine.items():
        assert episode['speeds'] == [speed(run, t) for t in range(STEPS)]
        assert episode['done'] == [False] * (STEPS - 1) + [True]
        np.testing.assert_allclose(episode['moved'], theirs[run]['moved'], atol=1e-6)
        assert episode['moved'][-1, 0] > 1e-5  # (it drove: the frames are not one state repeated)


def test_an_episode_whose_runner_died_is_dropped_and_its_rerun_saved_whole(tmp_path):
    """Runner 1 is killed two steps into its episode: that episode is dropped (its frames would
    stop at the death), the rerun of it on the new runner is saved whole, as are the others."""
    import ray

    env = Env(jetbot_config(3, env_num=1, steps=STEPS).distribute(RayDistributionCfg(proc_num=2)))
    recorder = Recorder(str(tmp_path / 'ray')).attach(env)
    env.reset()
    steps = {0: 0, 1: 0}
    for _ in range(2):
        env.step([{'jetbot': {'move_by_speed': (speed(env.slot_episodes[s], steps[s]), 0.0)}} for s in range(2)])
        steps = {s: steps[s] + 1 for s in steps}
    old = env.runner_actors[1]
    ray.kill(old)
    for _ in range(30):  # (until Ray reports it dead, so that the next step finds it so; 30 s at most)
        try:
            ray.get(old.ready.remote(), timeout=1)
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            break
        time.sleep(1)
    else:
        pytest.fail('the killed runner still answers after 30 s')
    failed_seen = _drive(env, steps)
    recorder.close()
    env.close()
    assert failed_seen and env.runner_restarts == [0, 1]
    assert recorder.episodes_saved == 3 and recorder.episodes_dropped == 1
    episodes, _ = _episodes(str(tmp_path / 'ray'))
    assert sorted(episodes) == [0, 1, 2]
    for run, episode in episodes.items():
        assert episode['speeds'] == [speed(run, t) for t in range(STEPS)]
        assert episode['done'] == [False] * (STEPS - 1) + [True]
