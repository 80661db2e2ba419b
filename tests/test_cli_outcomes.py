"""``internutopia run`` counts episodes by how they ended, as the results do: failed and diverged
episodes are not "finished", the summary and the progress say how many there were, and the exit
status is 3 when there was one. ``--env-num N`` problems read as ``--set env_num=N``'s, and
``--results none`` says that no results file is written."""

from __future__ import annotations

import json
import signal
import sys

import numpy as np
import pytest

from internutopia import cli
from internutopia.cli.command_line import EXIT_EPISODES_FAILED, EXIT_INTERRUPTED
from internutopia.cli.run_command import _print_summary
from internutopia.core.config import Config
from internutopia.core.task.base import BaseTask
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask


class CliOutcomesTaskCfg(FiniteStepTaskCfg):
    type: str = 'CliOutcomesTask'
    #: ``'step'``: the task raises on the episode's third step; ``'reset'``: it raises as the episode starts.
    boom: str = ''


@BaseTask.register('CliOutcomesTask')
class CliOutcomesTask(FiniteStepTask):
    def reset_slot(self, slot, config):
        if config.boom == 'reset':
            raise RuntimeError('boom at reset')
        super().reset_slot(slot, config)
        self.booms = getattr(self, 'booms', np.zeros(self.env_num, bool))
        self.booms[slot] = config.boom == 'step'

    def step(self, slots):
        for slot in slots.tolist():
            if self.booms[slot] and self.view.steps[slot] == 2:
                raise RuntimeError('boom at step')
        return super().step(slots)


def config_file(tmp_path, booms=('', 'step', ''), env_num=2):
    tasks = [CliOutcomesTaskCfg(max_steps=5, boom=boom, robots=[JetbotRobotCfg()]) for boom in booms]
    path = tmp_path / 'outcomes.yaml'
    Config(env_num=env_num, metrics_save_path='none', task_configs=tasks).to_yaml(path)
    return str(path)


def test_a_failed_episode_is_counted_as_failed_and_the_exit_status_says_so(tmp_path, capsys):
    path = config_file(tmp_path)
    results = tmp_path / 'r.jsonl'
    assert cli.main(['run', path, '--no-progress', '--results', str(results)]) == EXIT_EPISODES_FAILED == 3
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == 'episodes finished: 2/3 (1 failed)'
    assert lines[-1] == f'results: {results} (one JSON line per episode; the "error" of each failed one says why)'
    assert 'internutopia run: 1 of 3 episode(s) failed (exit status 3)' in err and 'Traceback' not in err
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r.get('outcome', 'finished') for r in records) == ['failed', 'finished', 'finished']


def test_the_json_summary_counts_the_outcomes(tmp_path, capsys):
    path = config_file(tmp_path)
    assert cli.main(['run', path, '--no-progress', '--json', '--results', 'none']) == 3
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (summary['episodes_finished'], summary['episodes_ended'], summary['episodes_total']) == (2, 3, 3)
    assert (summary['episodes_failed'], summary['episodes_diverged'], summary['episodes_abandoned']) == (1, 0, 0)


def test_an_episode_that_fails_to_start_is_counted_too(tmp_path, capsys):
    """An episode whose every start raises never runs a step: it ends as a failed record of the reset."""
    path = config_file(tmp_path, booms=('', 'reset', ''))
    assert cli.main(['run', path, '--no-progress', '--results', str(tmp_path / 'r.jsonl')]) == 3
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == 'episodes finished: 2/3 (1 failed)'
    assert 'internutopia run: 1 of 3 episode(s) failed (exit status 3)' in err


def test_the_progress_counts_what_the_summary_counts(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, 'tqdm', None)  # no tqdm: plain text progress on stderr
    path = config_file(tmp_path)
    assert cli.main(['run', path, '--results', 'none']) == 3
    out, err = capsys.readouterr()
    progress = [line for line in err.splitlines() if line.startswith('[internutopia] episodes')]
    assert progress[-1].startswith('[internutopia] episodes 2/3 (1 failed)  ')
    assert out.splitlines()[0] == 'episodes finished: 2/3 (1 failed)'


def test_the_progress_bar_counts_what_the_summary_counts(tmp_path, capsys):
    pytest.importorskip('tqdm')
    path = config_file(tmp_path)
    assert cli.main(['run', path, '--results', 'none']) == 3
    err = capsys.readouterr().err
    last = [line for line in err.replace('\r', '\n').splitlines() if line.startswith('episodes:')][-1]
    assert ' 2/3 ' in last and '1 failed' in last, last


def test_a_diverged_episode_is_counted_as_diverged(tmp_path, capsys, monkeypatch):
    from internutopia.core.vec_env import Env

    step = Env.step
    calls = []

    def blow_up_slot_1(self, action, **kwargs):  # on the third step, slot 1's simulation blows up
        calls.append(1)
        if len(calls) == 3:
            self.runner.world.pack(1).data.qvel[1, :] = 1e30
        return step(self, action, **kwargs)

    monkeypatch.setattr(Env, 'step', blow_up_slot_1)
    path = config_file(tmp_path, booms=('', '', ''))
    assert cli.main(['run', path, '--no-progress', '--results', str(tmp_path / 'r.jsonl')]) == 3
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == 'episodes finished: 2/3 (1 diverged)'
    assert 'internutopia run: 1 of 3 episode(s) diverged (exit status 3)' in err


def _interrupt_the_fourth_step(monkeypatch) -> None:
    """Make the env's fourth step raise KeyboardInterrupt, as a Ctrl-C held over it would."""
    from internutopia.core.vec_env import Env

    step = Env.step
    calls = []

    def interrupted_on_the_fourth_step(self, action, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return step(self, action, **kwargs)

    monkeypatch.setattr(Env, 'step', interrupted_on_the_fourth_step)


def test_ctrl_c_still_exits_130_after_a_failed_episode(tmp_path, capsys, monkeypatch):
    _interrupt_the_fourth_step(monkeypatch)
    path = config_file(tmp_path)
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert cli.main(['run', path, '--no-progress', '--results', 'none']) == EXIT_INTERRUPTED == 130
    finally:
        signal.signal(signal.SIGINT, handler)  # (as the test found it)
    out, err = capsys.readouterr()
    # (the two episodes still running when it stopped: abandoned by the env's close)
    assert out.splitlines()[0] == 'episodes finished: 0/3 (1 failed, 2 abandoned)  (interrupted)'
    assert 'interrupted: closing the env and writing the summary (no results file)' in err


def test_run_gives_ctrl_c_back_once_it_returns(tmp_path, monkeypatch):
    """``internutopia.cli.run`` from Python: after a Ctrl-C it returns its summary, and the caller's
    next Ctrl-C is a KeyboardInterrupt again, not the run's "end the process at once" (os._exit)."""
    _interrupt_the_fourth_step(monkeypatch)
    handler = signal.getsignal(signal.SIGINT)
    try:
        summary = cli.run(config_file(tmp_path, booms=('', '', '')), results='none', progress=False)
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, handler)
    assert summary['interrupted']
    assert 'stop_at_once' not in getattr(after, '__qualname__', '')  # (the handler of the run's own Ctrl-C: gone)


def test_a_ctrl_c_while_the_env_closes_at_the_end_still_prints_the_summary(tmp_path, capsys, monkeypatch):
    # A real SIGINT as the run's final close starts (with --record that close takes seconds): the
    # env closes (the Ctrl-C is held over it), every record is written, and the summary is printed.
    import threading

    from internutopia.core.vec_env import Env

    close, sent = Env.close, []

    def interrupted_close(self):
        if not sent:  # (once: the test's own teardown closes the env again)
            sent.append(signal.SIGINT)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        return close(self)

    monkeypatch.setattr(Env, 'close', interrupted_close)
    path = config_file(tmp_path, booms=('', '', ''))
    results = tmp_path / 'r.jsonl'
    assert cli.main(['run', path, '--no-progress', '--results', str(results)]) == EXIT_INTERRUPTED
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == 'episodes finished: 3/3  (interrupted)'
    assert len(results.read_text().splitlines()) == 3


def test_results_printed_to_the_console_name_how_each_episode_ended(tmp_path, capsys):
    path = config_file(tmp_path)
    assert cli.main(['run', path, '--no-progress', '--results', 'console']) == EXIT_EPISODES_FAILED
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith('[internutopia] episode ')]
    assert sorted(line.split(':')[0] for line in printed) == ['[internutopia] episode failed'] + ['[internutopia] episode finished'] * 2
    failed = json.loads(next(line for line in printed if 'failed:' in line).split(': ', 1)[1])
    assert failed['outcome'] == 'failed' and failed['error'] == 'boom at step'


def test_a_clean_run_exits_0_with_the_plain_summary(tmp_path, capsys):
    path = config_file(tmp_path, booms=('', '', ''))
    assert cli.main(['run', path, '--no-progress', '--results', 'none']) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == 'episodes finished: 3/3' and 'internutopia run:' not in err


def test_metric_means_say_which_episodes_they_average(capsys):
    """The results' means count a diverged episode's metrics (it ended, its metrics read): the summary says so."""
    summary = {'episodes_finished': 2, 'episodes_total': 3, 'episodes_diverged': 1, 'interrupted': False, 'steps': 9,
               'env_steps': 18, 'wall_s': 0.1, 'env_steps_per_s': 180.0, 'metrics_mean': {'success': 0.5}, 'results': 'r.jsonl'}
    _print_summary(summary)
    assert capsys.readouterr().out.splitlines()[:3] == [
        'episodes finished: 2/3 (1 diverged)', 'steps: 9  env-steps: 18  wall: 0.1 s  (180 env-steps/s)',
        '  success: 0.5 (mean over finished and diverged episodes)']
    _print_summary({**summary, 'episodes_diverged': 0, 'results_format': 'upstream'})
    out = capsys.readouterr().out.splitlines()
    assert out[2] == '  success: 0.5 (mean over finished episodes)'
    assert out[3] == "results: r.jsonl (InternUtopia's format: one JSON line of metrics per episode, failed ones left out)"


# ------------------------------------------------------------------------------------------------
# --results none
def test_results_none_says_that_no_file_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = config_file(tmp_path, booms=('', ''))
    assert cli.main(['run', path, '--no-progress', '--results', 'none']) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == 'results: no results file written (--results none)'
    assert 'one JSON line' not in out and not (tmp_path / 'none').exists()


# ------------------------------------------------------------------------------------------------
# --env-num N is --set env_num=N
@pytest.mark.parametrize('value', ['99999999999999999999'])
def test_env_num_errors_read_as_the_set_errors(tmp_path, capsys, value):
    path = config_file(tmp_path, booms=('',))
    assert cli.main(['run', path, '--no-progress', '--set', f'env_num={value}']) == cli.EXIT_ERROR
    by_set = capsys.readouterr().err.strip()
    assert cli.main(['run', path, '--no-progress', '--env-num', value]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert 'Traceback' not in err and 'ValidationError' not in err and len(err.splitlines()) == 1
    assert err == by_set.replace(f'--set env_num={value}:', f'--env-num {value}:')
    assert err.startswith(f'{path}:') and err.endswith(
        f': --env-num {value}: env_num: must be an integer that fits 64 bits (|value| < 2**63); got {value}')


def test_env_num_replaces_the_files_value_before_it_is_checked(tmp_path):
    path = tmp_path / 'zero.yaml'
    path.write_text('env_num: 0\nmetrics_save_path: none\ntask_configs:\n- {type: FiniteStepTask, robots: [{type: JetbotRobot}]}\n')
    assert cli.load_config(str(path), env_num=3).env_num == 3  # as --set env_num=3 would
    with pytest.raises(cli.ConfigError) as error:
        cli.load_config(str(path))
    assert error.value.problems == [f'{path}:1: env_num: env_num must be >= 1; got 0']
