"""KeyboardInteraction: keys from a pipe, a pseudo-terminal and the web viewer's page become
InternUtopia's (i, k, j, l, u, o) commands; with no terminal there are none; a robot moves on them."""

from __future__ import annotations

import io
import os
import shutil
import socket
import sys
import tempfile
import termios
import time

import numpy as np
import pytest

from internutopia.core.util.interaction import BaseInteraction
from internutopia_extension.interactions.keyboard import KEYS, KeyboardInteraction
from tests.browser import Browser, wait_for


def one_hot(key: str) -> list[float]:
    return [1.0 if k == key else 0.0 for k in KEYS]


@pytest.fixture
def pipe():
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        try:
            os.close(fd)
        except OSError:
            pass


def test_it_registers_under_upstreams_name(pipe):
    assert BaseInteraction.interactions['Keyboard'] is KeyboardInteraction
    assert KeyboardInteraction(stream=pipe[0]).type == 'Keyboard'


@pytest.mark.parametrize('key', list(KEYS))
def test_each_key_gives_its_command(pipe, key):
    read_end, write_end = pipe
    keyboard = KeyboardInteraction(stream=read_end)
    os.write(write_end, key.encode())
    assert keyboard.get_input().tolist() == one_hot(key)


def test_the_last_key_wins_and_other_keys_are_ignored(pipe):
    read_end, write_end = pipe
    keyboard = KeyboardInteraction(stream=read_end)
    os.write(write_end, b'ixZ\x1b')
    assert keyboard.get_input().tolist() == one_hot('i')
    os.write(write_end, b'iIo')  # capitals count; the last one is the command
    assert keyboard.get_input().tolist() == one_hot('o')


def test_a_key_is_held_while_it_repeats_and_released_after_hold(pipe):
    read_end, write_end = pipe
    keyboard = KeyboardInteraction(stream=read_end, hold=0.2)
    os.write(write_end, b'k')
    for _ in range(4):  # a held key repeats: the command stays
        time.sleep(0.1)
        os.write(write_end, b'k')
        assert keyboard.get_input().tolist() == one_hot('k')
    time.sleep(0.3)  # no repeat: released
    assert keyboard.get_input().tolist() == [0.0] * 6


def test_no_terminal_gives_zero_commands(monkeypatch):
    monkeypatch.setattr(sys, 'stdin', io.StringIO('iiii'))  # not a terminal (a headless job's stdin)
    keyboard = KeyboardInteraction()
    assert keyboard.terminal.fd is None
    assert keyboard.get_input().tolist() == [0.0] * 6


def test_a_closed_stream_stops_giving_keys(pipe):
    read_end, write_end = pipe
    keyboard = KeyboardInteraction(stream=read_end, hold=0.05)
    os.write(write_end, b'l')
    os.close(write_end)
    assert keyboard.get_input().tolist() == one_hot('l')
    time.sleep(0.1)
    assert keyboard.get_input().tolist() == [0.0] * 6
    assert keyboard.terminal.fd is None


def test_a_pseudo_terminal_is_read_key_by_key_and_given_back_its_settings():
    controller, terminal = os.openpty()
    try:
        before = termios.tcgetattr(terminal)
        keyboard = KeyboardInteraction(stream=terminal)
        during = termios.tcgetattr(terminal)
        assert not during[3] & termios.ICANON and not during[3] & termios.ECHO  # keys without Enter, not echoed
        os.write(controller, b'u')  # no newline
        assert keyboard.get_input().tolist() == one_hot('u')
        keyboard.close()
        assert termios.tcgetattr(terminal) == before
    finally:
        os.close(controller)
        os.close(terminal)


@pytest.mark.parametrize('hold', [0, -1.0, float('nan'), float('inf'), '1', True])
def test_bad_hold_is_refused(hold):
    with pytest.raises(ValueError, match=r'hold must be a finite number of seconds > 0; got'):
        KeyboardInteraction(hold=hold)


def test_upstreams_demo_loop_drives_a_robot_from_keys_and_ends_when_bounded(pipe, monkeypatch):
    """InternUtopia's g1_locomotion loop (``while env.simulation_app.is_running()``), on a Jetbot:
    'i' held drives it forward; INTERNUTOPIA_MAX_STEPS ends the loop, as a headless job needs."""
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.gym_env import Env
    from internutopia.core.vec_env import MAX_STEPS_ENV
    from internutopia_extension import import_extensions
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_by_speed_cfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    import_extensions()
    monkeypatch.setenv(MAX_STEPS_ENV, '240')
    read_end, write_end = pipe
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), metrics_save_path='none',
                     task_configs=[SingleInferenceTaskCfg(robots=[JetbotRobotCfg(controllers=[move_by_speed_cfg])])]))
    try:
        obs, _ = env.reset()
        start = np.asarray(obs['position']).copy()
        keyboard = KeyboardInteraction(stream=read_end, hold=10.0)
        os.write(write_end, b'i')
        steps = 0
        while env.simulation_app.is_running():
            steps += 1
            command = keyboard.get_input()
            x_speed = command[0] - command[1]
            z_speed = command[4] - command[5]
            obs, _, _, _, _ = env.step(action={move_by_speed_cfg.name: (0.3 * x_speed, z_speed)})
        assert steps == 240
        moved = np.asarray(obs['position']) - start
        assert moved[0] > 0.15 and abs(moved[1]) < 0.05  # ~0.3 m/s for 1 s, straight ahead
    finally:
        env.close()


@pytest.mark.parametrize('value', ['0', '-3', 'ten'])
def test_a_bad_step_bound_is_refused(monkeypatch, value):
    from internutopia.core.config import Config
    from internutopia.core.vec_env import MAX_STEPS_ENV, Env
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    monkeypatch.setenv(MAX_STEPS_ENV, value)
    with pytest.raises(ValueError, match=f'{MAX_STEPS_ENV} must be a positive int'):
        Env(Config(task_configs=[SingleInferenceTaskCfg(robots=[JetbotRobotCfg()])]))


def test_an_env_whose_step_bound_ran_out_is_still_released_by_close(monkeypatch):
    """The bound stops the app (the script's loop ends); the env refuses further steps, saying why,
    and its close() still releases the world and tells its observers."""
    from internutopia.core.config import Config
    from internutopia.core.vec_env import MAX_STEPS_ENV, Env
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    class CloseSeen:
        closed = 0

        def on_reset(self, *args):
            pass

        def on_step(self, *args):
            pass

        def on_close(self):
            self.closed += 1

    monkeypatch.setenv(MAX_STEPS_ENV, '2')
    env = Env(Config(env_num=2, metrics_save_path='none',
                     task_configs=[SingleInferenceTaskCfg(robots=[JetbotRobotCfg()])] * 2))
    seen = CloseSeen()
    env.add_observer(seen)
    env.reset()
    env.step([{}, {}])
    env.step([{}, {}])
    assert not env.simulation_app.is_running()
    with pytest.raises(RuntimeError, match=f'this Env has stopped: .*{MAX_STEPS_ENV}.*call env.close'):
        env.step([{}, {}])
    world = env.runner.world
    assert world.packs
    env.close()
    assert seen.closed == 1 and not world.packs  # (the physics batches are dropped)
    env.close()  # (a second close releases nothing twice)
    assert seen.closed == 1
    with pytest.raises(RuntimeError, match='this Env is closed'):
        env.step([{}, {}])


# ------------------------------------------------------------------------------------------------
# the web viewer: keys pressed in a real (headless) browser's page
#: The page's keys field: the one editable text input that starts empty.
_KEYS_FIELD = "Array.from(document.querySelectorAll('input')).find(x => x.type == 'text' && x.value === '' && !x.readOnly)"


@pytest.mark.xdist_group('browser')  # one headless Chromium at a time (see conftest.py)
@pytest.mark.skipif(shutil.which('chromium') is None and shutil.which('chromium-browser') is None,
                    reason='needs Chromium (the Debian package chromium; .ci/run installs it)')
def test_keys_pressed_in_the_browser_become_commands():
    pytest.importorskip('viser', reason="the viewer comes with the 'viewer' extra")
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env
    from internutopia.viewer import attach_viewer
    from internutopia_extension import import_extensions
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    import_extensions()
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    env = Env(Config(simulator=SimConfig(), env_num=1, metrics_save_path='none',
                     task_configs=[SingleInferenceTaskCfg(robots=[JetbotRobotCfg()])]))
    folder = tempfile.mkdtemp()
    browser = None
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        env.reset()
        viewer = attach_viewer(env, host='127.0.0.1', port=port)
        keyboard = KeyboardInteraction(viewer=viewer, stream=null, hold=5.0)
        assert keyboard.get_input().tolist() == [0.0] * 6
        browser = Browser(viewer.url, folder, width=1000, height=700)
        browser.call('Emulation.setFocusEmulationEnabled', enabled=True)
        wait_for(lambda: browser.evaluate(f'!!({_KEYS_FIELD})'), 60, 'the keys field in the page')
        assert browser.evaluate(f'(() => {{ const e = {_KEYS_FIELD}; e.focus(); return document.activeElement === e; }})()')
        browser.press('j')
        wait_for(lambda: keyboard.get_input()[2] == 1.0 or None, 20, "the browser's j")
        assert keyboard.get_input().tolist() == one_hot('j')
        browser.press('o')
        wait_for(lambda: keyboard.get_input()[5] == 1.0 or None, 20, "the browser's o")
        assert keyboard.get_input().tolist() == one_hot('o')
        keyboard.close()
    finally:
        if browser is not None:
            browser.close()
        os.close(null)
        env.close()
        shutil.rmtree(folder, ignore_errors=True)
