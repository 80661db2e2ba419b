"""Batched and threaded camera frames, render workers on Mesa's rasterizers, recording a video, the
benchmark's camera rows: checked on the pixels, headless on the CPU (Mesa EGL); helpers in
``rendering_helpers.py``."""

from __future__ import annotations

import os
import sys

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.backend.mujoco.render import camera_renderers  # noqa: E402
from internutopia.core.config import SimConfig  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg  # noqa: E402
from internutopia_extension.configs.sensors import RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.sensors.rep_camera import forward_camera_quat  # noqa: E402
from tests.rendering_helpers import make_env, psnr, scene_file_fixture, yaw_quat  # noqa: E402

WALL_XML = """<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1" rgba="0.5 0.5 0.5 1"/>
    <geom name="wall" type="box" size="0.05 1.5 1.0" pos="2.05 0 1.0" rgba="0.8 0.2 0.1 1"/>
    <geom name="post" type="cylinder" size="0.1 0.6" pos="1.2 -0.4 0.6" rgba="0.1 0.7 0.2 1"/>
  </worldbody>
</mujoco>
"""


wall_scene = scene_file_fixture(WALL_XML, 'wall.xml')


def jetbot_cameras(scene, cameras, slots=2, **sim):
    tasks = [FiniteStepTaskCfg(max_steps=100, scene_asset_path=scene,
                               robots=[JetbotRobotCfg(position=(0.2 * slot, 0.3 * slot, 0.0), orientation=yaw_quat(8 * slot),
                                                      sensors=cameras)]) for slot in range(slots)]
    env = make_env(tasks, env_num=slots, **sim)
    obs, _ = env.reset()
    readings = [obs[slot]['jetbot']['sensors'] for slot in range(slots)]
    renderers = [(r.frames, len(r.contexts), r.samples) for r in camera_renderers(env.runner.world)]
    env.close()
    return readings, renderers


def test_batched_threaded_and_depth_only_frames_match_single_frames(wall_scene):
    """Frames drawn in one batch (each into a framebuffer of its own), drawn by two threads, or drawn with no colour work (a depth-only
    camera) are the same pixels as one camera drawn alone."""
    size = (48, 36)
    front = jetbot_camera_cfg.update(resolution=size, depth=True)
    side = RepCameraCfg(name='side', prim_path='chassis/Side', resolution=size, depth=True, position=(0.0, 0.0, 0.3),
                        orientation=forward_camera_quat(20.0))
    depth_only = RepCameraCfg(name='front_depth', prim_path='chassis/Camera', resolution=size, rgba=False, depth=True)
    alone, _ = jetbot_cameras(wall_scene, [front], rendering_threads=1)
    batched, renderers = jetbot_cameras(wall_scene, [front, side, depth_only], rendering_threads=1)
    assert renderers == [(6, 1, 0)]  # 3 cameras x 2 slots, one batch
    threaded, renderers = jetbot_cameras(wall_scene, [front, side, depth_only], rendering_threads=2)
    assert renderers == [(6, 2, 0)]
    for slot in range(2):
        reference = alone[slot]['camera']
        red = (reference['rgba'][..., 0].astype(int) > reference['rgba'][..., 1].astype(int) + 40).mean()
        assert red > 0.2  # the wall is in view
        for readings in (batched, threaded):
            np.testing.assert_array_equal(readings[slot]['camera']['rgba'], reference['rgba'])
            # Depth may differ in the last bits between passes drawn in different framebuffers: equal to rounding.
            np.testing.assert_allclose(readings[slot]['camera']['depth'], reference['depth'], rtol=1e-5)
            np.testing.assert_allclose(readings[slot]['front_depth']['depth'], reference['depth'], rtol=1e-5)
            assert 'rgba' not in readings[slot]['front_depth']
            assert not np.array_equal(readings[slot]['side']['rgba'], reference['rgba'])  # another view
    assert not np.array_equal(alone[0]['camera']['rgba'], alone[1]['camera']['rgba'])  # slots differ


def test_multisampling_is_per_camera(wall_scene):
    size = (48, 36)
    plain = jetbot_camera_cfg.update(resolution=size)
    smooth = RepCameraCfg(name='smooth', prim_path='chassis/Camera', resolution=size, multisamples=4)
    readings, renderers = jetbot_cameras(wall_scene, [plain, smooth], slots=1)
    assert sorted(samples for _, _, samples in renderers) == [0, 4]
    a, b = readings[0]['camera']['rgba'][..., :3].astype(int), readings[0]['smooth']['rgba'][..., :3].astype(int)
    edges = np.abs(a - b).sum(axis=2) > 0
    assert 0 < edges.mean() < 0.3  # anti-aliasing changes edge pixels only
    assert psnr(a, b) > 25.0
    with pytest.raises(ValueError, match='multisamples'):
        RepCameraCfg(name='bad', prim_path='chassis/Camera', multisamples=3)
    with pytest.raises(ValueError, match='rendering_threads'):
        SimConfig(rendering_threads=0)


def load_record_video():
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'examples', 'record_video.py')
    spec = importlib.util.spec_from_file_location('record_video_example', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_record_video_fails_at_once_without_the_format_and_reports_progress(tmp_path, monkeypatch, capsys):
    from internutopia.core.util import video

    example = load_record_video()
    monkeypatch.setattr(example, 'Env', lambda *a, **k: pytest.fail('built an env before checking the output format'))
    monkeypatch.setattr(video, 'mp4_available', lambda: False)
    for out, hint in (('clip.mp4', 'pip install imageio imageio-ffmpeg'), ('clip.avi', '.mp4 or .gif')):
        with pytest.raises(SystemExit) as stopped:
            example.main(['--out', str(tmp_path / out), '--steps', '8'])
        assert stopped.value.code == 2 and hint in capsys.readouterr().err
    monkeypatch.undo()
    example = load_record_video()
    assert example.main(['--out', str(tmp_path / 'clip.gif'), '--steps', '16', '--every', '8', '--width', '64',
                         '--height', '48', '--head-camera']) == 0
    printed = capsys.readouterr().out
    assert 'step 16/16 (100%)' in printed and printed.count('step ') >= 2
    for name in ('clip.gif', 'clip_head.gif'):
        assert f'wrote {tmp_path / name}' in printed and (tmp_path / name).stat().st_size > 0


def test_compiled_depth_conversion_matches_numpy():
    from internutopia.core.backend.mujoco.render.context import depth_from_buffer, metric_depth

    rng = np.random.default_rng(0)
    raw = rng.uniform(0.0, 0.02, size=(12, 10)).astype(np.float32)
    raw[0, :3] = 0.0  # nothing drawn
    expected = metric_depth(raw[::-1], 0.01, 100.0)
    out = np.empty_like(expected)
    depth_from_buffer(raw, 0.01, 100.0, out)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert np.all(out[-1, :3] == np.float32(100.0))


def test_camera_rows_of_the_benchmark():
    """Values and format of the camera rows (speed itself is never asserted)."""
    from internutopia.bench import cameras as rows_module

    logged = []
    rows = rows_module.run_cameras(['h1'], [2], ['head_rgbd'], steps=6, chunk=2, with_async=False, log=logged.append,
                                   quality=False)
    (row,) = rows
    assert row['robot'] == 'h1' and row['env_num'] == 2 and row['cameras'] == 'head_rgbd' and row['depth'] is True
    assert row['frames_per_s'] > 0 and row['render_limit_frames_per_s'] > 0 and row['pairs'] >= 1
    assert row['render_limit_ratio_q1'] <= row['ratio_vs_render_limit'] <= row['render_limit_ratio_q3']
    assert row['ratio_vs_async'] is None and row['ratio_vs_async_ours'] is None
    # two render workers in a fresh process: on Mesa, displays without its rasterizer threads, and the line says
    # that the render limit drew there too
    assert isinstance(row['render_limit_inline'], bool)
    assert ('(no Mesa rasterizer threads)' in rows_module.format_camera_row(row)) == row['render_limit_inline']
    assert logged[0].startswith('[camera case 1/1] h1 x2 head_rgbd: measuring') and 'min left' in logged[0]
    table = rows_module.camera_markdown_table(rows).splitlines()
    assert len(table) == 3 and table[2].startswith('| h1 | head_rgbd | 2 |') and table[2].count('skipped') == 5
    assert rows_module.estimate_seconds([1, 4, 16, 64], list(rows_module.SETTINGS), 24, True) > \
        rows_module.estimate_seconds([1], ['head_rgb'], 24, False) > 0
    quality = rows_module.measure_lod_quality('h1', steps=(0,))
    assert quality['faces_lod'] < quality['faces_full'] / 10
    assert quality['tp_psnr_db_min'] is not None and quality['tp_psnr_db_min'] > 30.0
    assert quality['head_identical_frames'] == 1 or quality['head_psnr_db_min'] > 30.0


def test_ours_beside_a_pool_of_our_env_is_timed_in_pairs_and_leaves_no_process():
    """The comparison with a process pool of our own env: ours and the pool alternate in chunks in
    one fresh process; the row reports the pairs' median ratio with its spread and both speeds,
    and no process of the pool outlives the measurement (speed itself is never asserted)."""
    import os

    from internutopia.bench import cameras as rows_module
    from internutopia.bench.camera_pool import measure_beside_pool
    from internutopia.bench.processes import children_of

    before = set(children_of(os.getpid()))
    beside = measure_beside_pool('h1', 'head_rgb', 2, steps=4, chunk=2)
    assert set(children_of(os.getpid())) == before
    assert beside['pairs'] == 2 and beside['chunk'] == 2 and len(beside['ratios']) >= 1
    assert beside['ratio_q1'] <= beside['ratio'] <= beside['ratio_q3']
    assert beside['ours_step_s'] > 0 and beside['limit_step_s'] > 0
    # two workers of one robot each, and ours (which drove them) with two
    assert 0 < beside['pool_worker_peak_mb'] <= beside['pool_workers_mb'] and beside['ours_peak_mb'] > 0
    ours_alone = {'ours_step_s': 0.01, 'limit_step_s': 0.5, 'ratio': 50.0, 'ratio_q1': 45.0, 'ratio_q3': 55.0,
                  'pairs': 2, 'chunk': 2, 'startup_s': 1.0, 'peak_memory_mb': 500.0}
    row = rows_module.camera_row('h1', 'head_rgb', 2, ours_alone, None, beside)
    assert row['ratio_vs_async_ours'] == round(beside['ratio'], 2) and row['async_ours_pairs'] == 2
    assert row['async_ours_env_steps_per_s'] == round(2 / beside['limit_step_s'], 1)
    assert row['ours_beside_pool_env_steps_per_s'] == round(2 / beside['ours_step_s'], 1)
    assert f'ours/async(our env) {row["ratio_vs_async_ours"]:.2f} (IQR' in rows_module.format_camera_row(row)
    assert rows_module.camera_markdown_table([row]).splitlines()[2].count('skipped') == 2  # the plain-renderer pool


def test_a_dropped_pack_takes_its_rendering_state_along(wall_scene, monkeypatch):
    """A slot changing structure leaves its old pack; when the world drops that pack (here at once:
    no memory budget for parking packs), its render contexts and render threads go with it:
    nothing of the rendering keeps a pack alive."""
    import gc
    import weakref

    from internutopia.core.backend.mujoco import world as world_module
    from internutopia.core.backend.mujoco.render import pack as pack_module

    monkeypatch.setattr(world_module, '_PARKED_BYTES', 0)

    camera = jetbot_camera_cfg.update(resolution=(32, 24), report_rendered=True)
    tasks = [FiniteStepTaskCfg(max_steps=100, scene_asset_path=scene, robots=[JetbotRobotCfg(sensors=[camera])])
             for scene in (wall_scene, None)]
    env = make_env(tasks, env_num=1, rendering_threads=2)
    obs, _ = env.reset()
    first = weakref.ref(env.runner.world.pack(0))
    assert obs[0]['jetbot']['sensors']['camera']['rendered']
    obs, _ = env.reset()  # the second episode: another scene, another pack
    assert obs[0]['jetbot']['sensors']['camera']['rgba'][..., :3].std() > 1.0
    gc.collect()
    assert first() is None
    assert len(pack_module._STATES) == len([p for p in env.runner.world.packs.values() if id(p) in pack_module._STATES])
    assert len(camera_renderers(env.runner.world)) == 1
    env.close()


#: Run in a fresh interpreter (a display's rasterizer threads are fixed when the display is made):
#: ``env_num`` jetbots with 64x48 cameras on two render threads, three steps; prints whether each
#: display rasterizes on its drawing threads, the process's Mesa rasterizer threads, and a digest
#: of the frames.
_SCREENS_SCRIPT = """
import hashlib, json, os, sys
from internutopia.core.backend.mujoco.render import gl
from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
env_num = int(sys.argv[1])
camera = jetbot_camera_cfg.update(resolution=(64, 48), depth=True)
task = FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg(sensors=[camera])])
env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240, rendering_threads=2), env_num=env_num,
                 env_offset_size=5.0, metrics_save_path='none', task_configs=[task] * env_num))
env.reset()
digest = hashlib.sha256()
for _ in range(3):
    obs, *_ = env.step([{'jetbot': {'move_by_speed': (0.3, 0.5)}}] * env_num)
for row in obs:
    reading = row['jetbot']['sensors']['camera']
    digest.update(reading['rgba'].tobytes())
    digest.update(reading['depth'].tobytes())
names = [open(f'/proc/self/task/{tid}/comm').read().strip() for tid in os.listdir('/proc/self/task')]
print(json.dumps({'inline': gl._Screens.inline, 'second': gl._Screens.display is not None,
                  'contrast': float(min(row['jetbot']['sensors']['camera']['rgba'][..., :3].std() for row in obs)),
                  'rasterizer_threads': sum(name.startswith('llvmpipe') for name in names),
                  'digest': digest.hexdigest()}))
env.close()
"""


def _screens_run(env_num: int, **environment: str) -> dict:
    import json
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key != 'LP_NUM_THREADS'}
    env.update(environment)
    done = subprocess.run([sys.executable, '-c', _SCREENS_SCRIPT, str(env_num)], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Mesa EGL displays: Linux only')
def test_two_workers_rasterize_on_their_own_threads_with_the_same_pixels():
    """Two render workers, each on a display of its own: the displays are made with no rasterizer
    threads of Mesa's (each frame is rasterized on the thread that drew it), and the frames are
    those of Mesa's threaded rasterizer, pixel for pixel. A user's ``LP_NUM_THREADS`` is left as
    set, and a process with one slot (one worker) keeps Mesa's threads."""
    two = _screens_run(2)
    if not two['second']:
        pytest.skip('no second Mesa display on this machine (a GPU, or EGL without the surfaceless platform)')
    assert two['inline'] == {'mujoco': True, 'second': True} and two['rasterizer_threads'] == 0
    assert two['contrast'] > 5  # real frames: floor, sky, horizon
    users = _screens_run(2, LP_NUM_THREADS='2')
    assert users['inline'] == {'mujoco': False, 'second': False} and users['rasterizer_threads'] == 4  # two per display
    assert users['digest'] == two['digest']
    one = _screens_run(1)
    assert one['inline'] == {'mujoco': False, 'second': False}
    assert one['rasterizer_threads'] >= (1 if (os.cpu_count() or 1) > 1 else 0)  # Mesa's default: one per core


def test_a_render_thread_that_never_finishes_fails_its_episodes_not_the_env(monkeypatch):
    """A render thread stuck in the GL driver (here: its share of a batch held back) is waited for
    ``RENDER_WAIT_S``, then the episodes whose cameras it drew end as failed with that error; the
    renderer fails at once afterwards (no second wait per call or per slot: each of the next
    episodes' first observation fails at once, a failed start), and the env closes without
    waiting for the stuck thread."""
    import threading
    import time

    from internutopia.core.backend.mujoco.render import cameras

    tasks = [FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg(sensors=[jetbot_camera_cfg.update(resolution=(32, 24))])])] * 6
    env = make_env(tasks, env_num=2, rendering_threads=2)
    env.reset()
    release, original = threading.Event(), cameras.CameraRenderer._work

    def stuck_second_thread(self, index, requests, frames):
        if index == 1:
            release.wait(60)
        return original(self, index, requests, frames)

    monkeypatch.setattr(cameras.CameraRenderer, '_work', stuck_second_thread)
    monkeypatch.setattr(cameras, 'RENDER_WAIT_S', 0.5)
    try:
        started = time.monotonic()
        for _ in range(8):  # (the cameras draw every few physics steps)
            _, _, terminated, _, info = env.step([None, None])
            if any(terminated):
                break
        assert terminated == [True, True] and time.monotonic() - started < 5
        for slot_info in info:
            assert 'render thread 1 of the 32x24 cameras did not finish its frames within 0.5 s' in slot_info['failed']
        (renderer,) = camera_renderers(env.runner.world)
        assert renderer.broken is not None
        started = time.monotonic()
        obs, info = env.reset([0, 1])  # the next episodes' first frames: the error again, at once
        assert time.monotonic() - started < 2 and info == [None, None] and env.finished
        summary = env.runner.results.summary()
        assert summary['records'] == 6 and summary['outcomes'] == {'failed': 6}  # (4 of them: 3 tries each)
        started = time.monotonic()
        env.close()
        assert time.monotonic() - started < 2
    finally:
        release.set()
        env.close()


def test_render_workers_spread_over_two_mesa_rasterizers_or_share_one(wall_scene, monkeypatch):
    """With two render threads on Mesa's CPU rasterizer, the second worker draws through a display
    of its own (Mesa's surfaceless platform: a rasterizer of its own); where that display cannot be
    made, both share MuJoCo's. Either way its frames are those of one worker alone (the test above
    compares the pixels)."""
    from mujoco import egl as mujoco_egl

    from internutopia.core.backend.mujoco.render import gl

    def worker_contexts():
        tasks = [FiniteStepTaskCfg(max_steps=5, scene_asset_path=wall_scene, robots=[
            JetbotRobotCfg(sensors=[jetbot_camera_cfg.update(resolution=(32, 24))])])] * 2
        env = make_env(tasks, env_num=2, rendering_threads=2)
        try:
            obs, _ = env.reset()
            (renderer,) = camera_renderers(env.runner.world)
            images = [o['jetbot']['sensors']['camera']['rgba'] for o in obs]
            return [w.context.gl for w in renderer._workers], images
        finally:
            env.close()

    contexts, images = worker_contexts()
    assert all(image[..., :3].std() > 5 for image in images)
    assert gl._Screens.default_renderer is not None
    if gl._Screens.default_renderer.startswith('llvmpipe'):  # (this project's CI machine)
        assert isinstance(contexts[1], gl.EglContext) and not isinstance(contexts[0], gl.EglContext)
        assert contexts[1].display.address != mujoco_egl.EGL_DISPLAY.address  # another rasterizer
    # No second display (a driver without Mesa's surfaceless platform): both on MuJoCo's display.
    monkeypatch.setattr(gl._Screens, 'checked', False)
    monkeypatch.setattr(gl._Screens, 'display', None)

    def no_platform(*args):
        raise RuntimeError('EGL_BAD_PARAMETER')

    monkeypatch.setattr(mujoco_egl.egl_ext, 'eglGetPlatformDisplayEXT', no_platform)
    fallback, same_images = worker_contexts()
    assert not any(isinstance(context, gl.EglContext) for context in fallback)
    for image, again in zip(images, same_images, strict=True):
        np.testing.assert_array_equal(image, again)
