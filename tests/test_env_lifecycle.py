"""An env's life in a real user's process: several envs side by side, envs never closed, envs made
again, a closed env used, an env used from another thread, ``fork`` after an env rendered, GL
contexts of many envs made and dropped (``docs/reliability.md``, "Several envs in one process").

Whatever could hang or crash the interpreter runs in a subprocess of its own, bounded by a timeout
that kills its whole process group (a forked child included).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np
import pytest

import internutopia  # noqa: F401 - registers the internutopia/... ids
from internutopia.core.config import Config
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVE = {'jetbot': {'move_by_speed': (0.2, 0.3)}}

# The prelude of every subprocess script: a Jetbot env maker (a camera when asked) and a drive
# that returns each step's position and camera frame of slot 1.
PRELUDE = textwrap.dedent('''
    import gc, json, os, sys, threading
    import numpy as np
    from internutopia.core.config import Config
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg
    import_extensions()

    def make(env_num=2, camera=True):
        robot = JetbotRobotCfg(position=(0.0, 0.0, 0.05), sensors=[jetbot_camera_cfg] if camera else None)
        task = FiniteStepTaskCfg(max_steps=1000, robots=[robot])
        return Env(Config(env_num=env_num, metrics_save_path='none', task_configs=[task] * env_num))

    def drive(env, steps=3):
        out = []
        for _ in range(steps):
            obs = env.step([{'jetbot': {'move_by_speed': (0.2, 0.3)}}] * env.env_num)[0]
            out.append((obs[1]['jetbot']['position'].copy(), obs[1]['jetbot']['sensors']['camera']['rgba'].copy()))
        return out

    def same(a, b):
        return len(a) == len(b) and all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))
''')


def _run(script: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run ``PRELUDE + script`` in a fresh interpreter (its own session); on a timeout its whole
    process group is killed and the test fails."""
    env = {**os.environ, 'MUJOCO_GL': 'egl', 'PYTHONPATH': ROOT}
    process = subprocess.Popen([sys.executable, '-c', PRELUDE + textwrap.dedent(script)], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f'the script did not finish within {timeout} s (a hang)\nstdout:\n{out}\nstderr:\n{err[-3000:]}')
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _last_json(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, f'exit code {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr[-3000:]}'
    return json.loads(result.stdout.strip().splitlines()[-1])


def _jetbot_env(env_num: int = 2, camera: bool = True) -> Env:
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.05), sensors=[jetbot_camera_cfg] if camera else None)
    task = FiniteStepTaskCfg(max_steps=1000, robots=[robot])
    return Env(Config(env_num=env_num, metrics_save_path='none', task_configs=[task] * env_num))


def _h1_env(env_num: int = 2) -> Env:
    robot = H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg])
    task = FiniteStepTaskCfg(max_steps=1000, robots=[robot])
    return Env(Config(env_num=env_num, metrics_save_path='none', task_configs=[task] * env_num))


def _jetbot_steps(env: Env, steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for _ in range(steps):
        obs = env.step([DRIVE] * env.env_num)[0]
        out.append((obs[1]['jetbot']['position'].copy(), obs[1]['jetbot']['sensors']['camera']['rgba'].copy()))
    return out


def _h1_steps(env: Env, steps: int) -> list[np.ndarray]:
    return [env.step([{'h1': {'move_by_speed': (0.5, 0.0, 0.1)}}] * env.env_num)[0][0]['h1']['position'].copy()
            for _ in range(steps)]


def _gym_steps(envs: gym.vector.VectorEnv, steps: int) -> list[np.ndarray]:
    action = np.tile([0.3, 0.1], (envs.num_envs, 1)).astype(np.float32)
    return [envs.step(action)[0].copy() for _ in range(steps)]


def _same(a: list, b: list) -> bool:
    def equal(x, y):
        return all(np.array_equal(p, q) for p, q in zip(x, y, strict=True)) if isinstance(x, tuple) else np.array_equal(x, y)
    return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------------------------------
# Several envs at once


def test_envs_side_by_side_give_what_each_gives_alone_and_outlive_each_other():
    """A Jetbot env with cameras, an H1 env and a Gymnasium vector env, stepped in turn in one
    process: positions, camera frames and overview renders are each the same as the env's run alone;
    closing two of them leaves the third stepping as before."""
    steps = 12
    jet = _jetbot_env(2)
    jet.reset()
    jet_alone, jet_render = _jetbot_steps(jet, steps), jet.render()
    jet.close()
    h1 = _h1_env(3)
    h1.reset()
    h1_alone = _h1_steps(h1, steps)
    h1.close()
    vec = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=4, render_mode='rgb_array')
    vec.reset(seed=0)
    vec_alone, vec_frames = _gym_steps(vec, steps), vec.render()
    vec.close()

    jet, h1 = _jetbot_env(2), _h1_env(3)
    vec = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=4, render_mode='rgb_array')
    jet.reset()
    h1.reset()
    vec.reset(seed=0)
    jet_both: list = []
    h1_both: list = []
    vec_both: list = []
    for step in range(steps):
        if step == steps // 2:
            h1.close()  # (the others go on as before)
        else:
            h1_both += [] if step > steps // 2 else _h1_steps(h1, 1)
        jet_both += _jetbot_steps(jet, 1)
        vec_both += _gym_steps(vec, 1)
    assert _same(jet_both, jet_alone)
    assert _same(h1_both, h1_alone[:steps // 2])
    assert _same(vec_both, vec_alone)
    # Each render shows its own world (the Jetbot grid of two, the vector env's four cells).
    assert np.array_equal(jet.render(), jet_render)
    frames = vec.render()
    assert frames is not None and vec_frames is not None
    assert all(np.array_equal(a, b) for a, b in zip(frames, vec_frames, strict=True))
    jet.close()
    assert len(_gym_steps(vec, 1)) == 1  # (still steps with the other two closed)
    vec.close()


# ---------------------------------------------------------------------------------------------
# Envs never closed


def test_envs_deleted_without_close_give_their_memory_and_threads_back():
    """20 Jetbot envs of 16 slots, each reset, stepped and dropped (``del env; gc.collect()``),
    no ``close``: resident memory, threads and child processes stay where they were after the first."""
    result = _run('''
        import psutil
        process = psutil.Process()
        rss, threads, children, alive = [], [], [], []
        import weakref
        refs = []
        for cycle in range(20):
            env = make(16, camera=False)
            env.reset()
            for _ in range(5):
                env.step([None] * 16)
            refs.append(weakref.ref(env))
            del env
            gc.collect()
            rss.append(process.memory_info().rss / 2**20)
            threads.append(len(threading.enumerate()))
            children.append(len(process.children(recursive=True)))
            alive.append(sum(ref() is not None for ref in refs))
        print(json.dumps({'rss': rss, 'threads': threads, 'children': children, 'alive': alive}))
    ''', timeout=300)
    figures = _last_json(result)
    assert figures['alive'] == [0] * 20  # (no env outlives its last reference)
    assert figures['threads'] == [1] * 20 and figures['children'] == [0] * 20
    assert figures['rss'][-1] - figures['rss'][1] < 15.0, figures['rss']  # (measured: +0.1 MB)


def test_an_unclosed_env_collected_inside_another_envs_render_leaves_its_pixels_alone():
    """An env dropped without ``close`` in a reference cycle is freed by the cyclic GC wherever it
    triggers: here inside another env's camera render (forced with ``gc.collect()`` there; one runs
    inside its overview render too). That env's frames are what it draws alone, and the dropped
    env's GL contexts are freed once the render is over (they were freed mid-render: the camera
    frames came out wrong, and under load "an offscreen framebuffer could not be made (GL status 0x0)")."""
    result = _run('''
        from internutopia.core.backend.mujoco.render import context as context_module
        from internutopia.core.backend.mujoco.render import pack as pack_module

        def make():  # (small frames: one render worker, on the thread that steps)
            robot = JetbotRobotCfg(position=(0.0, 0.0, 0.05), sensors=[jetbot_camera_cfg.update(resolution=(32, 24))])
            task = FiniteStepTaskCfg(max_steps=1000, robots=[robot])
            return Env(Config(env_num=2, metrics_save_path='none', task_configs=[task] * 2))

        alone = make()
        alone.reset()
        expected = (drive(alone), alone.render(160, 120))
        alone.close()

        leaked = make()
        leaked.reset()
        drive(leaked, 1)
        leaked.render(160, 120)
        leaked_contexts = [c for state in pack_module._STATES.values() for c in state.contexts]
        leaked._cycle = leaked  # (only the cyclic GC frees it now)
        gc.disable()  # (and only where the render below calls it)
        live = make()
        live.reset()
        del leaked

        update_scene, collected = context_module.RenderContext.update_scene, {}
        def collecting_update_scene(self, *args, **kwargs):
            kind = 'overview' if kwargs.get('offset') is not None else 'camera'
            if kind not in collected:  # (once per kind; cameras drawing on two threads may both get here)
                collected.setdefault(kind, []).append(gc.collect())
            return update_scene(self, *args, **kwargs)
        context_module.RenderContext.update_scene = collecting_update_scene
        got = (drive(live), live.render(160, 120))
        print(json.dumps({'collected': collected, 'same_frames': same(got[0], expected[0]),
                          'same_overview': bool(np.array_equal(got[1], expected[1])),
                          'leaked_contexts': len(leaked_contexts),
                          'leaked_freed': all(c.mjr is None for c in leaked_contexts)}))
        live.close()
    ''')
    figures = _last_json(result)
    assert sorted(figures['collected']) == ['camera', 'overview'] and sum(figures['collected']['camera']) > 0, figures
    assert figures['same_frames'] and figures['same_overview'], figures
    assert figures['leaked_contexts'] >= 2 and figures['leaked_freed'], figures
    assert 'EGL' not in result.stderr and 'Traceback' not in result.stderr, result.stderr[-3000:]


def test_the_interpreter_exits_cleanly_with_everything_left_open(tmp_path):
    """A script that leaves an env with cameras, a Gymnasium vector env, a ``gym.make`` env, a live
    viewer and a video recorder open ends at once with exit code 0 and no traceback, and the
    recorder's video is written."""
    pytest.importorskip('PIL')
    gif = tmp_path / 'left_open.gif'
    viewer = 'from internutopia.viewer import attach_viewer; viewer = attach_viewer(env, port=0)'
    try:
        import viser  # noqa: F401
    except ImportError:
        viewer = 'pass'
    result = _run(f'''
        import gymnasium as gym, internutopia
        from internutopia.core.util.video import VideoRecorder
        env = make(2)
        env.reset()
        drive(env, 2)
        vec = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=4, render_mode='rgb_array')
        vec.reset(seed=0)
        vec.render()
        single = gym.make('internutopia/JetbotPointNav-v0', render_mode='rgb_array')
        single.reset(seed=0)
        single.render()
        {viewer}
        video = VideoRecorder({str(gif)!r}, fps=10)
        for _ in range(3):
            env.step([None, None])
            video.append(env.render(160, 120))
        print('end of script', flush=True)
    ''', timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'Traceback' not in result.stderr and 'Exception ignored' not in result.stderr, result.stderr[-3000:]
    assert 'end of script' in result.stdout.splitlines()
    from PIL import Image

    with Image.open(gif) as image:
        assert image.n_frames == 3 and image.size == (160, 120)


def test_a_video_recorder_never_closed_writes_its_gif(tmp_path):
    """A GIF recorder dropped without ``close`` (a notebook's variable rebound, a loop that raised)
    writes its frames when it is collected; before, they were lost without a word."""
    pytest.importorskip('PIL')
    from PIL import Image

    from internutopia.core.util.video import VideoRecorder

    def record(path, frames):
        video = VideoRecorder(path, fps=5)
        for i in range(frames):
            video.append(np.full((8, 10, 3), 40 * i, dtype=np.uint8))
        raise RuntimeError('the loop failed')

    path = tmp_path / 'dropped.gif'
    with pytest.raises(RuntimeError, match='the loop failed'):
        record(path, 4)
    import gc

    gc.collect()
    with Image.open(path) as image:
        assert image.n_frames == 4 and image.size == (10, 8)


# ---------------------------------------------------------------------------------------------
# Made again


def test_an_env_made_again_after_failures_gives_the_same_results():
    """The same config built again and again (a notebook re-running its cell, the old env never
    closed), after a construction whose reset failed and after a refused step: the same positions
    and camera pixels every time."""
    env = _jetbot_env(2)
    env.reset()
    first = _jetbot_steps(env, 4)
    bad = Env(Config(env_num=2, metrics_save_path='none', task_configs=[
        FiniteStepTaskCfg(max_steps=10, scene_asset_path='/nonexistent/scene.usd', robots=[JetbotRobotCfg()])]))
    with pytest.raises(ValueError, match='scene file not found'):
        bad.reset()
    with pytest.raises(ValueError, match='unknown controller'):
        env.step([{'jetbot': {'fly': (1.0,)}}] * 2)
    for _ in range(3):
        env = _jetbot_env(2)  # (the previous one dropped unclosed)
        env.reset()
        assert _same(_jetbot_steps(env, 4), first)


# ---------------------------------------------------------------------------------------------
# A closed env


def test_a_closed_env_refuses_every_call_with_one_clear_error():
    env = _jetbot_env(2)
    env.reset()
    env.step([None, None])
    env.close()
    env.close()  # (twice: nothing happens)
    calls = {
        'reset': lambda: env.reset(), 'reset([0])': lambda: env.reset([0]), 'step': lambda: env.step([None, None]),
        'step_arrays': lambda: env.step_arrays({}), 'reset_arrays': lambda: env.reset_arrays(),
        'render': lambda: env.render(), 'render_envs': lambda: env.render_envs(),
        'get_observations': lambda: env.get_observations(), 'warm_up': lambda: env.warm_up(),
        'state_arrays': lambda: env.state_arrays(array_backend='numpy'),
    }
    for call in calls.values():
        with pytest.raises(RuntimeError, match='^this Env is closed$'):
            call()
    assert env.simulation_app.is_running() is False and env.env_num == 2


def test_a_with_block_that_raises_closes_the_env_and_raises_the_error():
    with pytest.raises(ZeroDivisionError):
        with _jetbot_env(2, camera=False) as env:
            env.reset()
            _ = 1 / 0
    with pytest.raises(RuntimeError, match='this Env is closed'):
        env.step([None, None])


def test_a_closed_gym_make_env_is_built_again_by_reset():
    """``gym.make('internutopia/...')``'s env after ``close``: a step says the env is closed, a
    reset builds the world again and starts as the first did (before, the reset raised "it was
    given vector_env= so it cannot build its world again", an argument the user never gave)."""
    env = gym.make('internutopia/JetbotPointNav-v0')
    first, _ = env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match='closed'):
        env.step(np.zeros(2, dtype=np.float32))
    again, _ = env.reset(seed=0)
    assert np.array_equal(first, again)
    env.close()


# ---------------------------------------------------------------------------------------------
# Another thread


def test_an_env_works_from_a_thread_other_than_its_makers():
    """Made in the main thread and driven from a worker (a GUI's, a server's), made in a worker
    and driven from the main thread, or one env per thread at once: the same positions and pixels."""
    env = _jetbot_env(2)
    env.reset()
    reference = _jetbot_steps(env, 3)
    env.close()

    def drive(env: Env) -> list:
        env.reset()
        return _jetbot_steps(env, 3)

    def own() -> list:
        env = _jetbot_env(2)
        try:
            return drive(env)
        finally:
            env.close()

    with ThreadPoolExecutor(2) as pool:
        env = _jetbot_env(2)
        assert _same(pool.submit(drive, env).result(timeout=120), reference)
        pool.submit(env.close).result(timeout=60)
        env = pool.submit(_jetbot_env, 2).result(timeout=120)
        assert _same(drive(env), reference)
        env.close()
        for future in [pool.submit(own) for _ in range(2)]:
            assert _same(future.result(timeout=300), reference)
    assert [t for t in threading.enumerate() if t.name == 'internutopia-render'] == []


# ---------------------------------------------------------------------------------------------
# fork


def test_subproc_vec_env_with_fork_after_the_parent_rendered():
    """Stable-Baselines3's ``SubprocVecEnv`` (``fork`` on Linux) over ``gym.make`` envs, started
    after this process rendered: the same observations and images as the envs in-process. Before,
    each child hung forever making its first GL context (Mesa's EGL display, inherited without its
    threads)."""
    pytest.importorskip('stable_baselines3')
    result = _run('''
        import gymnasium as gym, internutopia
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
        def one():
            return gym.make('internutopia/JetbotPointNav-v0', render_mode='rgb_array')
        action = np.tile([0.3, 0.1], (2, 1)).astype(np.float32)
        def run(envs):
            envs.seed(0)
            out = [envs.reset()] + [envs.step(action)[0] for _ in range(4)]
            return out, envs.get_images()
        here = DummyVecEnv([one, one])
        obs, images = run(here)
        forked = SubprocVecEnv([one, one], start_method='fork')
        obs2, images2 = run(forked)
        forked.close()
        here.close()
        print(json.dumps({'obs': all(np.array_equal(a, b) for a, b in zip(obs, obs2)),
                          'images': all(np.array_equal(a, b) for a, b in zip(images, images2)),
                          'lit': float(np.mean(images2[0]))}))
    ''', timeout=180)
    figures = _last_json(result)
    assert figures['obs'] and figures['images'] and figures['lit'] > 20


def test_a_forked_child_of_a_rendering_process_renders_steps_and_exits():
    """``os.fork`` after an env with cameras stepped: a child that ends at once exits 0 (it hung in
    MuJoCo's exit handler, ``eglTerminate`` of the inherited display); a child that builds its own
    env gets the parent's pixels; a child that steps the inherited env gets a RuntimeError that
    says what to do, and exits with its own status (it hung in the physics threads' pool, or
    crashed at exit in Mesa's, ``SIGSEGV``); on one core (no pool) it steps."""
    result = _run('''
        env = make(2)
        env.reset()
        reference = drive(env)
        def child(body):
            pid = os.fork()
            if pid == 0:
                import signal
                signal.alarm(60)
                try:
                    code = body()
                except BaseException as error:
                    print(json.dumps({'error': f'{type(error).__name__}: {error}'}), flush=True)
                    code = 7
                sys.exit(code)
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        def own_env():
            mine = make(2)
            mine.reset()
            ok = same(drive(mine), reference)
            mine.close()
            return 0 if ok else 5
        pooled = max(pack.batch.nthread for pack in env.runner.world.packs.values()) > 1
        codes = {'nothing': child(lambda: 0), 'own env': child(own_env), 'inherited env': child(lambda: (drive(env), 0)[1]),
                 'pooled': pooled}
        drive(env)  # (the parent's env steps on)
        again = make(2)
        again.reset()
        codes['parent after'] = 0 if same(drive(again), reference) else 5
        print(json.dumps(codes))
    ''', timeout=240)
    lines = result.stdout.strip().splitlines()
    codes = _last_json(result)
    if not codes.pop('pooled'):  # (a world stepped on the calling thread alone steps in the child too)
        assert codes == {'nothing': 0, 'own env': 0, 'inherited env': 0, 'parent after': 0}
        return
    assert codes == {'nothing': 0, 'own env': 0, 'inherited env': 7, 'parent after': 0}
    error = json.loads(lines[-2])['error']
    assert error.startswith('RuntimeError: this env was built in process ') and 'is a fork of it' in error
    assert "'spawn' or 'forkserver'" in error


# ---------------------------------------------------------------------------------------------
# GL contexts


@pytest.mark.slow
def test_thirty_envs_with_cameras_made_and_dropped_leave_no_gl_context_behind():
    """30 envs with cameras, each rendering its cameras and an overview, half closed and half only
    dropped: every one draws the same pixels, no EGL error, threads back to one, memory flat."""
    result = _run('''
        import psutil
        process = psutil.Process()
        first, frames, rss, threads = None, [], [], []
        for cycle in range(30):
            env = make(4)
            env.reset()
            out = drive(env, 1)
            picture = env.render(160, 120)
            if first is None:
                first = (out, picture)
            frames.append(same(out, first[0]) and np.array_equal(picture, first[1]))
            if cycle % 2:
                env.close()
            del env
            gc.collect()
            rss.append(process.memory_info().rss / 2**20)
            threads.append(len(threading.enumerate()))
        print(json.dumps({'frames': frames, 'rss': rss, 'threads': threads}))
    ''', timeout=400)
    figures = _last_json(result)
    assert all(figures['frames'])
    assert figures['threads'] == [1] * 30
    assert 'EGL' not in result.stderr and 'Traceback' not in result.stderr, result.stderr[-3000:]
    assert figures['rss'][-1] - figures['rss'][2] < 60.0, figures['rss']
