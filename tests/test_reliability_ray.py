"""Faults injected into a run on Ray: a runner that hangs, a task that fails to start or step, a
scene that does not load; every episode still ends with exactly one record and ``finished``
becomes true. (Slow: each test class shares one Ray.)"""

from __future__ import annotations

import collections
import json
import os
import time

import numpy as np
import pytest

ray = pytest.importorskip('ray')

from internutopia.core.config import Config  # noqa: E402
from internutopia.core.distribution import RayDistributionCfg  # noqa: E402
from internutopia.core.task.base import BaseTask  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.tasks.finite_step import FiniteStepTask  # noqa: E402


class RayFaultTaskCfg(FiniteStepTaskCfg):
    """Fails as told: ``hang_flag`` hangs the runner at step 2 unless the file exists (it is made
    first, so the rerun does not hang; ``hang_always`` hangs every time); ``start_fails`` raises
    on every start; ``step_fails_at`` raises at that step."""

    type: str = 'RayReliabilityFaultTask'
    hang_flag: str | None = None
    hang_always: bool = False
    start_fails: bool = False
    step_fails_at: int = 0


@BaseTask.register('RayReliabilityFaultTask')
class RayFaultTask(FiniteStepTask):
    def reset_slot(self, slot: int, config) -> None:
        if config.start_fails:
            raise RuntimeError('this task never loads')
        super().reset_slot(slot, config)
        self.faults = getattr(self, 'faults', [None] * self.env_num)
        self.faults[slot] = config

    def step(self, slots: np.ndarray):
        for slot in slots.tolist():
            config, steps = self.faults[slot], int(self.view.steps[slot])
            if config.step_fails_at and steps == config.step_fails_at:
                raise ValueError(f'step {steps} broke')
            if config.hang_flag and steps == 2 and (config.hang_always or not os.path.exists(config.hang_flag)):
                open(config.hang_flag, 'w').close()
                time.sleep(600)  # the runner hangs in the middle of a step
        return super().step(slots)


def task(max_steps: int = 3, **kw) -> RayFaultTaskCfg:
    return RayFaultTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg()], **kw)


def distributed(tasks, path, proc_num=2, env_num=1, **kw) -> Env:
    dist = {name: kw.pop(name) for name in ('step_timeout_s', 'reset_timeout_s') if name in kw}
    config = Config(env_num=env_num, metrics_save_path=str(path), task_configs=tasks, **kw)
    return Env(config.distribute(RayDistributionCfg(proc_num=proc_num, **dist)))


def drive(env: Env, limit: int = 200) -> list[dict]:
    """Step and reset ended or emptied slots until the env is finished; every info seen."""
    infos = []
    env.reset()
    for _ in range(limit):
        if env.finished:
            return infos
        _, _, terminated, _, info = env.step([None] * env.env_num)
        infos.extend(i for i in info if i)
        ended = [g for g, (t, i) in enumerate(zip(terminated, info, strict=True)) if t or (i and i.get('runner_failed'))]
        if ended:
            env.reset(ended)
    raise AssertionError(f'not finished after {limit} steps')


def by_index(path) -> dict[int, list[dict]]:
    found = collections.defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        found[record['episode_index']].append(record)
    return found


@pytest.mark.slow
class TestFailuresOnRay:
    """Envs joining one Ray started by the class (they leave it running on close)."""

    @pytest.fixture(scope='class', autouse=True)
    @classmethod
    def local_ray(cls):
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield
        ray.shutdown()

    def test_failing_starts_and_steps_end_their_own_episodes_once(self, tmp_path):
        path = tmp_path / 'results.jsonl'
        tasks = [task(4), task(4, step_fails_at=2), task(4, start_fails=True), task(4), task(2)]
        env = distributed(tasks, path)
        infos = drive(env)
        env.close()
        assert any(i.get('failed') == 'ValueError: step 2 broke' for i in infos)
        records = by_index(path)
        assert sorted(records) == [0, 1, 2, 3, 4] and all(len(r) == 1 for r in records.values())
        assert records[1][0]['outcome'] == 'failed' and records[1][0]['stage'] == 'step'
        assert records[2][0]['outcome'] == 'failed' and records[2][0]['attempts'] == 3
        assert [records[i][0]['steps'] for i in (0, 3, 4)] == [4, 4, 2]

    def test_a_scene_that_does_not_load_is_not_requeued_forever(self, tmp_path):
        broken = tmp_path / 'broken.xml'
        broken.write_text('<mujoco><worldbody><geom type="nonsense"/></worldbody></mujoco>')
        path = tmp_path / 'results.jsonl'
        tasks = [task(2), RayFaultTaskCfg(max_steps=2, scene_asset_path=str(broken), robots=[JetbotRobotCfg()]), task(2)]
        env = distributed(tasks, path)
        failures = 0
        for _ in range(10):
            try:
                env.reset()
                break
            except ValueError:
                failures += 1
        assert failures == 3 and env.slot_episodes == [0, 2]
        env.close()
        assert json.loads(path.read_text().splitlines()[0])['outcome'] == 'failed'

    def test_a_hung_runner_is_restarted_and_its_episodes_rerun_or_recorded(self, tmp_path):
        path = tmp_path / 'results.jsonl'
        tasks = [task(3), task(3, hang_flag=str(tmp_path / 'once')), task(3), task(3, hang_flag=str(tmp_path / 'always'), hang_always=True),
                 task(3)]
        env = distributed(tasks, path, step_timeout_s=3.0, episode_attempts=2)
        started = time.monotonic()
        infos = drive(env)
        assert time.monotonic() - started < 300  # no hang (a hung step sleeps 600 s): each waited out its timeout only
        assert any(i.get('requeued_episode') == 1 for i in infos) and any(i.get('failed_episode') == 3 for i in infos)
        assert sum(env.runner_restarts) == 3  # once for episode 1, twice for episode 3
        env.close()
        records = by_index(path)
        assert sorted(records) == [0, 1, 2, 3, 4] and all(len(r) == 1 for r in records.values())
        assert records[1][0]['steps'] == 3 and 'outcome' not in records[1][0]  # run again, in full
        assert records[3][0]['outcome'] == 'failed' and records[3][0]['error_type'] == 'RunnerHung'
        assert env.finished  # read after close: from what the env knew, not from Ray
        with pytest.raises(RuntimeError, match='this Env is closed'):
            env.runner_info()  # (it used to ask Ray, and started one where none ran)
