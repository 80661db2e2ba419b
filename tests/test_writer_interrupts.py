"""Ctrl-C while a recording's dataset writer starts: the writer survives it, the caller's Ctrl-C handling is kept.

A terminal's Ctrl-C goes to the whole foreground process group, the writer's ``spawn`` process
included. The writer ignores SIGINT once its job loop runs, but starting Python and unpickling
its arguments takes about half a second: a Ctrl-C then used to kill it (``exit code -2``) and the
whole recording was lost, though the episodes that had finished should have been saved
(docs/datasets.md, "Interruptions"). The tests send real ``SIGINT``s to the writer's process right
after it started (and, in a process of its own session, to the whole process group) and check the
dataset; and that starting the writer changes nothing of the caller's handling of Ctrl-C.
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

import pytest

pytest.importorskip('pyarrow')

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.runner.guard import held_interrupts  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Recorder  # noqa: E402
from internutopia.recording import recorder as recorder_module  # noqa: E402
from internutopia.recording import writer as writer_module  # noqa: E402
from internutopia.recording.reader import open_lerobot_dataset  # noqa: E402
from internutopia.recording.writer import DatasetWriter  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sigint_blocked() -> bool:
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def _ctrl_c_to(pid: int, times: int = 3, every_s: float = 0.05) -> None:
    """Ctrl-C to ``pid`` ``times`` times, ``every_s`` apart: all of them within its start."""
    for _ in range(times):
        os.kill(pid, signal.SIGINT)
        time.sleep(every_s)


def test_a_ctrl_c_to_the_writer_while_it_starts_leaves_it_running(tmp_path):
    writer = DatasetWriter(str(tmp_path / 'ds'), {}, [], 30.0)
    _ctrl_c_to(writer._process.pid)  # (its start takes about half a second: these land in it)
    writer.set_features({})
    writer.flush()  # (the writer took the job: it runs)
    assert writer._process.is_alive()
    os.kill(writer._process.pid, signal.SIGINT)  # (and once it runs, as before)
    writer.close()  # (raised "the dataset writer ... died (exit code -2)" before)
    assert writer._process.exitcode == 0


def test_a_recording_whose_writer_got_a_ctrl_c_as_it_started_saves_every_episode(tmp_path, monkeypatch):
    def writer(*args, _real=DatasetWriter, **kwargs):
        made = _real(*args, **kwargs)
        _ctrl_c_to(made._process.pid, times=1, every_s=0)
        return made

    monkeypatch.setattr(recorder_module, 'DatasetWriter', writer)
    root = str(tmp_path / 'ds')
    robot = JetbotRobotCfg()
    robot = robot.update(controllers=[c for c in robot.controllers if c.name == 'move_by_speed'])  # (the one driven)
    tasks = [FiniteStepTaskCfg(max_steps=3, robots=[robot]) for _ in range(4)]
    config = Config(simulator=SimConfig(physics_dt=1 / 60), env_num=2, env_offset_size=5.0, metrics_save_path='none',
                    task_configs=tasks)
    act = {'jetbot': {'move_by_speed': [0.2, 0.0]}}
    with Env(config) as env:
        recorder = Recorder(root).attach(env)
        env.reset()
        while not env.finished:
            _, _, terminated, _, info = env.step([act, act])
            ended = [slot for slot in range(2) if terminated[slot] and info[slot] is not None]
            if ended:
                env.reset(ended)
    assert recorder.episodes_saved == 4 and recorder.saves_failed == 0
    dataset = open_lerobot_dataset(root)
    assert dataset.num_episodes == 4 and len(dataset) == 12


def test_a_terminal_ctrl_c_to_the_process_group_as_the_writer_starts_keeps_its_recording(tmp_path):
    # A process of its own session (its own process group, as a terminal's foreground job) starts a
    # writer and sends SIGINT to its whole group at once: the script catches its KeyboardInterrupt,
    # queues its work and closes the writer, which saved it.
    script = textwrap.dedent('''
        import json, os, signal, sys, time
        from internutopia.recording.writer import DatasetWriter
        writer = DatasetWriter(sys.argv[1], {}, [], 30.0)
        caught = 0
        try:
            os.killpg(0, signal.SIGINT)  # (a terminal's Ctrl-C: to every process of the group)
            time.sleep(5)
        except KeyboardInterrupt:
            caught = 1
        writer.set_features({})
        error = None
        try:
            writer.close()
        except Exception as exc:
            error = str(exc)
        print(json.dumps({'caught': caught, 'exitcode': writer._process.exitcode, 'error': error}))
    ''')
    out = subprocess.run([sys.executable, '-c', script, str(tmp_path / 'ds')], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, start_new_session=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {'caught': 1, 'exitcode': 0, 'error': None}


def test_starting_the_writer_keeps_the_callers_ctrl_c_handling(tmp_path, monkeypatch):
    # A Ctrl-C to this process while the writer starts is neither lost nor raised inside the start:
    # here, held by held_interrupts (as inside an env's reset), it is raised at the block's end; the
    # handler and this thread's signal mask are as they were.
    real_start = writer_module._start_without_sigint
    seen = {}

    def start(process):
        def launch():
            del process.start  # (the process is pickled for the child: without this function)
            seen['blocked'] = _sigint_blocked()
            signal.raise_signal(signal.SIGINT)  # (pending on this thread until the start is done)
            process.start()

        process.start = launch
        real_start(process)

    monkeypatch.setattr(writer_module, '_start_without_sigint', start)
    # (Python's own Ctrl-C handling, whatever a test before this one in the process left behind)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with held_interrupts():
            handler = signal.getsignal(signal.SIGINT)
        writer = None
        with pytest.raises(KeyboardInterrupt):
            with held_interrupts():
                writer = DatasetWriter(str(tmp_path / 'ds'), {}, [], 30.0)
                assert signal.getsignal(signal.SIGINT) is handler and not _sigint_blocked()
                writer.flush()
        assert writer is not None and seen == {'blocked': True}
        assert signal.getsignal(signal.SIGINT) is handler and not _sigint_blocked()
        writer.close()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert writer._process.exitcode == 0


def test_a_writer_started_from_another_thread_survives_a_ctrl_c_too(tmp_path):
    made: dict = {}

    def run():
        made['writer'] = DatasetWriter(str(tmp_path / 'ds'), {}, [], 30.0)
        made['blocked after'] = _sigint_blocked()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    writer = made['writer']
    _ctrl_c_to(writer._process.pid)
    writer.flush()
    writer.close()
    assert writer._process.exitcode == 0 and made['blocked after'] is False
