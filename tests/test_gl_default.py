"""Where MuJoCo's GL backend defaults to EGL, and what rendering says where nothing can render.

A GPU server's minimal image may have no EGL library: there ``import mujoco`` with
``MUJOCO_GL=egl`` fails outright, so the default (and the benchmarks) must not set it, and only a
render may fail, naming what to install. A missing library is made real here by pointing the
check at a file name that does not exist (the same ``dlopen`` failure).
"""

from __future__ import annotations

import os

import pytest

from internutopia.core.backend.mujoco.render import gl

MISSING = 'libEGL-internutopia-test-missing.so.9'


def test_egl_loads_on_this_machine():
    # (CI installs Mesa's EGL: README's test command renders camera images)
    assert gl.egl_loads()


def test_egl_becomes_the_default_where_it_loads():
    env: dict[str, str] = {}
    assert gl.default_to_egl(env) is True
    assert env == {'MUJOCO_GL': 'egl'}
    empty = {'MUJOCO_GL': ' '}
    assert gl.default_to_egl(empty) is True and empty['MUJOCO_GL'] == 'egl'


def test_no_default_where_no_egl_loads(monkeypatch):
    monkeypatch.setattr(gl, 'EGL_LIBRARY', MISSING)
    assert gl.egl_loads() is False
    env: dict[str, str] = {}
    assert gl.default_to_egl(env) is False
    assert env == {}
    assert gl.default_to_egl(env, headless_only=False) is False
    assert env == {}


def test_a_chosen_backend_is_kept_and_a_display_only_counts_for_the_library_default():
    chosen = {'MUJOCO_GL': 'osmesa'}
    assert gl.default_to_egl(chosen, headless_only=False) is False
    assert chosen == {'MUJOCO_GL': 'osmesa'}
    desktop = {'DISPLAY': ':0'}
    assert gl.default_to_egl(desktop) is False
    assert 'MUJOCO_GL' not in desktop
    assert gl.default_to_egl(desktop, headless_only=False) is True  # (the benchmarks render through EGL anyway)
    assert desktop['MUJOCO_GL'] == 'egl'


def test_rendering_with_no_display_and_no_egl_names_what_to_install(monkeypatch):
    monkeypatch.setattr(gl, 'EGL_LIBRARY', MISSING)
    monkeypatch.delenv('DISPLAY', raising=False)
    monkeypatch.delenv('WAYLAND_DISPLAY', raising=False)
    monkeypatch.setenv('MUJOCO_GL', '')
    with pytest.raises(RuntimeError, match=r'no display, MUJOCO_GL is not set and libEGL-internutopia-test-missing'
                                           r'.*apt install libegl1.*MUJOCO_GL=osmesa'):
        gl.gl_context_class()
    assert os.environ['MUJOCO_GL'] == ''  # (nothing chosen for the user)


def test_rendering_with_no_display_picks_egl_where_it_loads(monkeypatch):
    monkeypatch.delenv('DISPLAY', raising=False)
    monkeypatch.delenv('WAYLAND_DISPLAY', raising=False)
    monkeypatch.setenv('MUJOCO_GL', '')
    from mujoco.egl import GLContext

    assert gl.gl_context_class() is GLContext
    assert os.environ['MUJOCO_GL'] == 'egl'


GLFW_WITHOUT_A_DISPLAY = '''
import warnings
from internutopia.core.config import Config
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, camera_cfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

import_extensions()
robot = JetbotRobotCfg(sensors=[camera_cfg.update(resolution=(64, 48), enable=True)])
config = Config(env_num=1, metrics_save_path='none', episode_attempts=1,
                task_configs=[SingleInferenceTaskCfg(robots=[robot])])
with warnings.catch_warnings(record=True) as caught, Env(config) as env:
    warnings.simplefilter('always')
    obs, _ = env.reset()
print('OBS', obs)
print('WARNED', [str(w.message) for w in caught if 'failed to start' in str(w.message)])
'''


def test_a_glfw_backend_without_a_display_fails_the_episode_with_a_hint_and_does_not_hang():
    """``MUJOCO_GL=glx`` (or ``glfw``) on a machine without a display: GLFW only warns that it
    cannot open a window, and MuJoCo then built its render context with no GL context current and
    never returned (the env hung in its first camera frame). Now the camera's episode fails at
    once with an error that says why and what to set."""
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key not in ('DISPLAY', 'WAYLAND_DISPLAY')}
    env['MUJOCO_GL'] = 'glx'
    done = subprocess.run([sys.executable, '-c', GLFW_WITHOUT_A_DISPLAY], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'OBS [None]' in done.stdout
    assert ("cannot render: MUJOCO_GL='glx' draws through a GLFW window and GLFW could not open one (no display is set"
            in done.stdout), done.stdout
    assert 'leave MUJOCO_GL unset (EGL is then the default) or set MUJOCO_GL=egl or osmesa' in done.stdout
