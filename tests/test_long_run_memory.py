"""Long runs: what a warning leaves behind per episode stays bounded.

Python's ``'default'`` warning filter (a script's, for ``RuntimeWarning``) enters every distinct
text it shows in the ``__warningregistry__`` of the module the warning points at, for the life of
the process. The warnings an episode may cause name that episode (an episode that failed to start,
a results record that could not be written yet), so no two texts are the same: before
:func:`~internutopia.core.util.caller.warn_per_episode`, the caller's module kept one entry per
such episode, without end (a run where every other episode failed to start grew by 0.54 kB per
failed episode: +8.6 MB over 16,000, docs/reliability.md "Memory stays flat"). These tests count
the registry's entries after hundreds of such warnings, each of which must still be shown.
"""

from __future__ import annotations

import errno
import warnings

from internutopia.core import results
from internutopia.core.config import Config, SimConfig
from internutopia.core.distribution.runner_warnings import RunnerWarnings
from internutopia.core.results import ResultsWriter
from internutopia.core.vec_env import Env
from internutopia_extension.configs.metrics import RecordingMetricCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

#: Warnings per test: the unfixed code left exactly this many registry entries.
MANY = 300


def registry_entries() -> int:
    """Entries of this module's warning registry (the module every warning here points at),
    its filters' ``version`` stamp left out."""
    return len([key for key in globals().get('__warningregistry__', {}) if key != 'version'])


def test_episodes_that_fail_to_start_leave_nothing_in_the_callers_warning_registry():
    good = FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.035))])
    fails = FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.035))],
                              metrics=[RecordingMetricCfg(robot_name='jetbot', fields=['typo'])])
    episodes = (fails if index % 2 == 0 else good for index in range(2 * MANY))  # (an iterator: nothing kept by the caller)
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 60), env_num=2, metrics_save_path='none', episode_attempts=1,
                     task_configs=[good]), episodes)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('default')  # (a script's filter for RuntimeWarning)
            env.reset()
            while env.active_slots:
                _, _, terminated, _, info = env.step([None, None])
                ended = [slot for slot in range(2) if terminated[slot] and info[slot] is not None]
                if ended:
                    env.reset(ended)
            failed = env.runner.results.summary()['outcomes']['failed']
            entries = registry_entries()
    finally:
        env.close()
    shown = [w for w in caught if issubclass(w.category, RuntimeWarning) and 'failed to start' in str(w.message)]
    assert failed == MANY and len(shown) == MANY  # every failed episode is still told, once
    assert {w.filename for w in shown} == {__file__}  # at the caller's reset or step
    assert entries == 0  # (unfixed: 300, one per failed episode)


def test_the_ray_driver_warns_failed_starts_without_keeping_them():
    # The driver shows what its runners warned (RunnerWarnings, runners of 4 slots); a runner's
    # failed-start warnings name their episode as on one process.
    driver = RunnerWarnings(local_num=4, raise_failed=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('default')
        for index in range(MANY):
            driver.warn([(RuntimeWarning, f'episode {index} failed to start in slot 1 (1 attempt(s), '
                                          'Config.episode_attempts) and is recorded as failed: ValueError: bad')], 2)
        entries = registry_entries()
    assert len(caught) == MANY and str(caught[7].message).startswith('episode 7 failed to start in slot 9 ')
    assert entries == 0


def test_records_the_disk_refuses_leave_nothing_in_the_callers_warning_registry(tmp_path, monkeypatch):
    def disk_full(fd, data):
        raise OSError(errno.ENOSPC, 'No space left on device')

    monkeypatch.setattr(results, '_write_bytes', disk_full)
    writer = ResultsWriter(str(tmp_path / 'results.jsonl'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('default')
        for index in range(MANY):
            writer.write({'episode_index': index, 'metrics': {}})
        entries = registry_entries()
    monkeypatch.undo()
    writer.close()
    assert len(caught) == MANY and f'cannot write {MANY} episode record(s)' in str(caught[-1].message)
    assert entries == 0
