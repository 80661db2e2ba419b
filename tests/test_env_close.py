"""``Env.close`` releases everything whatever an observer does, and never under a running call.

An observer whose ``on_close`` raises used to stop the close before the release: the world, the
results file's last records and the other observers were left, on every try. A close from
another thread used to tear the world down under a running step (which then died inside the
physics loop). Each fault is injected here and what a user sees is checked: the error, the results
file, the other observer's call, the env's state after.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from internutopia.core.config import Config
from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask

#: Set by a test: the blocking task's step waits on it (a step held in its thread).
IN_STEP = threading.Event()
RELEASE = threading.Event()


class HeldStepTaskCfg(FiniteStepTaskCfg):
    type: str = 'CloseTestHeldStepTask'


@BaseTask.register('CloseTestHeldStepTask')
class HeldStepTask(FiniteStepTask):
    def step(self, slots: np.ndarray):
        if not RELEASE.is_set():
            IN_STEP.set()
            RELEASE.wait(30)
        return super().step(slots)


class Observer:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.closed = 0

    def on_reset(self, slots, obs, info) -> None:
        pass

    def on_step(self, action, result) -> None:
        pass

    def on_close(self) -> None:
        self.closed += 1
        if self.fail:
            raise OSError('the observer lost its disk')


def test_an_observer_that_raises_on_close_keeps_nothing_from_being_released(tmp_path):
    path = tmp_path / 'results.jsonl'
    config = Config(env_num=2, metrics_save_path=str(path),
                    task_configs=[FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()]) for _ in range(2)])
    env = Env(config)
    failing, other = Observer(fail=True), Observer()
    env.add_observer(failing)
    env.add_observer(other)
    env.reset()
    env.step([None, None])
    with pytest.raises(OSError, match='the observer lost its disk'):
        env.close()
    assert (failing.closed, other.closed) == (1, 1)  # (the other observer was told all the same)
    assert not env.simulation_app.is_running()
    with pytest.raises(RuntimeError, match='closed'):
        env.step([None, None])
    env.close()  # (a second close: nothing more to release, no error)
    assert failing.closed == 1
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(r['episode_index'] for r in records) == [0, 1]  # (the results file was flushed and closed)


def test_a_close_from_another_thread_during_a_step_is_refused_and_releases_nothing():
    IN_STEP.clear()
    RELEASE.clear()
    config = Config(env_num=1, metrics_save_path='none',
                    task_configs=[HeldStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg()])])
    env = Env(config)
    env.reset()
    results: list = []
    stepper = threading.Thread(target=lambda: results.append(env.step([None])), name='stepper')
    try:
        stepper.start()
        assert IN_STEP.wait(30)
        with pytest.raises(RuntimeError, match=r"is in step\(\) in thread 'stepper'; close\(\) from thread"):
            env.close()
        assert env.simulation_app.is_running()  # (nothing released under the step)
    finally:
        RELEASE.set()
        stepper.join(30)
    assert not stepper.is_alive() and results and results[0][0][0] is not None  # (the step finished whole)
    env.step([None])
    env.close()
    assert not env.simulation_app.is_running()
