"""Cameras (RepCamera), render scheduling, the grid overview and video, headless on the CPU (Mesa EGL)."""

from __future__ import annotations

import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.backend.mujoco.render import (  # noqa: E402
    HIDDEN_GROUP,
    camera_renderers,
    has_render_state,
    overview_camera,
    pack_render,
)
from internutopia.core.backend.mujoco.visuals import DrawnState  # noqa: E402
from internutopia.core.config import Config, SimConfig, strict_config  # noqa: E402
from internutopia.core.util.video import VideoRecorder, mp4_available  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1RobotCfg, h1_camera_cfg, h1_tp_camera_cfg, move_by_speed_cfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg  # noqa: E402
from internutopia_extension.configs.sensors import RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from tests.rendering_helpers import scene_file_fixture  # noqa: E402

#: Front face of the test wall, in the slot frame (the jetbot camera looks along +x at it).
WALL_FACE_X = 2.0
WALL_XML = f"""<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1" rgba="0.5 0.5 0.5 1"/>
    <geom name="wall" type="box" size="0.05 1.5 1.0" pos="{WALL_FACE_X + 0.05} 0 1.0" rgba="0.8 0.2 0.1 1"/>
  </worldbody>
</mujoco>
"""


wall_scene = scene_file_fixture(WALL_XML, 'wall.xml')


def make_env(tasks, env_num, offset=5.0, **sim):
    sim = {'physics_dt': 1 / 240, 'rendering_dt': 1 / 240, **sim}  # render on every step unless a test says otherwise
    return Env(Config(simulator=SimConfig(**sim), env_num=env_num, env_offset_size=offset,
                      metrics_save_path='none', task_configs=list(tasks)))


def jetbot_task(sensors, scene=None, max_steps=1000):
    return FiniteStepTaskCfg(max_steps=max_steps, scene_asset_path=scene, robots=[JetbotRobotCfg(sensors=sensors)])


def test_h1_head_and_third_person_cameras(tmp_path):
    h1 = H1RobotCfg(controllers=[move_by_speed_cfg], sensors=[
        h1_camera_cfg.update(resolution=(64, 48), depth=True, camera_params=True, report_rendered=True),
        h1_tp_camera_cfg.update(resolution=(80, 60), depth=False, report_rendered=True),
    ])
    env = make_env([FiniteStepTaskCfg(max_steps=100, robots=[h1])] * 2, env_num=2, offset=10.0)
    obs, _ = env.reset()
    obs, *_ = env.step([None, None])
    for slot in range(2):
        sensors = obs[slot]['h1']['sensors']
        head, tp = sensors['camera'], sensors['tp_camera']
        assert head['rgba'].shape == (48, 64, 4) and head['rgba'].dtype == np.uint8
        assert head['depth'].shape == (48, 64) and head['depth'].dtype == np.float32
        assert tp['rgba'].shape == (60, 80, 4) and 'depth' not in tp and 'camera_params' not in tp
        assert head['rendered'] is True and tp['rendered'] is True
        assert np.all(head['rgba'][..., 3] == 255)
        for image in (head['rgba'], tp['rgba']):
            assert image[..., :3].std() > 5.0, 'image is (nearly) constant'
        # Head camera: level-ish view, so the floor ahead is near at the bottom and far at the top.
        depth = head['depth']
        assert np.isfinite(depth).all() and depth.min() > 0.3
        assert depth[-1].mean() < depth[len(depth) // 2].mean()
        params = head['camera_params']
        focal = 24 / np.tan(np.pi / 6)  # (H / 2) / tan(fovy / 2), fovy 60 deg
        np.testing.assert_allclose(params['intrinsics'], [[focal, 0, 32], [0, focal, 24], [0, 0, 1]])
        position, orientation = params['pose']['position'], params['pose']['orientation']
        assert 1.5 < position[2] < 1.9 and abs(position[0] - 0.13) < 0.05, position  # head height, env-local
        assert abs(np.linalg.norm(orientation) - 1) < 1e-6
        # Third-person view: the robot (dark) stands in the middle of the image, over the grey floor.
        centre = tp['rgba'][20:50, 30:50, :3].astype(int).sum(axis=2)
        assert centre.min() < 100 and np.median(tp['rgba'][50:, :, :3]) > 40  # not the black background
    # Two image sizes -> two camera renderers, shared by both slots.
    assert sorted(renderer.frame_size for renderer in camera_renderers(env.runner.world)) == [(64, 48), (80, 60)]
    env.close()
    assert not has_render_state(env.runner.world)


def test_depth_matches_distance_to_wall(wall_scene):
    camera = jetbot_camera_cfg.update(resolution=(80, 60), depth=True, camera_params=True)
    env = make_env([jetbot_task([camera], wall_scene)] * 2, env_num=2)
    obs, _ = env.reset()
    for _ in range(20):  # let the jetbot settle on its wheels
        obs, *_ = env.step([None, None])
    for slot in range(2):
        reading = obs[slot]['jetbot']['sensors']['camera']
        pose = reading['camera_params']['pose']
        expected = WALL_FACE_X - pose['position'][0]
        centre = reading['depth'][28:32, 38:42]
        assert np.all(np.abs(centre - expected) <= 0.02 * expected), (centre, expected)
        red, green, blue = reading['rgba'][30, 40, :3].astype(int)
        assert red > green + 40 and red > blue + 40  # the wall's colour
    env.close()


def test_clipping_range_limits_depth(wall_scene):
    camera = jetbot_camera_cfg.update(resolution=(40, 30), depth=True, clipping_range_m=(0.05, 1.5))
    env = make_env([jetbot_task([camera], wall_scene)], env_num=1)
    obs, _ = env.reset()
    depth = obs[0]['jetbot']['sensors']['camera']['depth']
    assert depth[15, 20] == pytest.approx(1.5)  # the wall (1.9 m away) is beyond the far plane
    assert depth[-1].max() < 1.5  # the floor just ahead is not
    env.close()


def test_disabled_camera_builds_nothing(wall_scene):
    env = make_env([jetbot_task([jetbot_camera_cfg.update(enable=False)], wall_scene)] * 2, env_num=2)
    obs, _ = env.reset()
    for _ in range(3):
        obs, *_ = env.step([None, None])
    world = env.runner.world
    (group,) = env.runner.robot_groups.values()
    assert group.sensors == {}
    assert world.pack(0).model.ncam == 0
    assert obs[0]['jetbot']['sensors'] == {} and obs[1]['jetbot']['sensors'] == {}
    assert not has_render_state(world)  # no GL context, no renderer
    env.close()


def test_render_schedule_by_interval_and_by_dt():
    camera = jetbot_camera_cfg.update(resolution=(32, 24), report_rendered=True)
    drive = {'jetbot': {'move_by_speed': [0.5, 2.0]}}

    env = make_env([jetbot_task([camera])] * 3, env_num=2, rendering_interval=3)
    obs, _ = env.reset()
    assert [o['jetbot']['sensors']['camera']['rendered'] for o in obs] == [True, True]
    flags, last = [], obs[0]['jetbot']['sensors']['camera']['rgba']
    for _step in range(6):
        obs, *_ = env.step([drive, drive])
        reading = obs[0]['jetbot']['sensors']['camera']
        flags.append(reading['rendered'])
        if not reading['rendered']:
            assert np.array_equal(reading['rgba'], last)  # the last image again
        last = reading['rgba']
        assert obs[1]['jetbot']['sensors']['camera']['rendered'] == reading['rendered']
    assert flags == [False, False, True, False, False, True]
    (renderer,) = camera_renderers(env.runner.world)
    assert renderer.frames == 2 + 2 * 2  # reset, then two render steps, two slots each
    # A slot that starts an episode gets a fresh image at once, whatever the schedule says.
    obs, _ = env.reset([1])
    assert obs[0]['jetbot']['sensors']['camera']['rendered'] is True
    obs, *_ = env.step([drive, drive])
    assert [o['jetbot']['sensors']['camera']['rendered'] for o in obs] == [False, False]
    env.close()

    env = Env(Config(simulator=SimConfig(physics_dt=0.01, rendering_dt=0.02), env_num=1, metrics_save_path='none',
                     task_configs=[jetbot_task([camera])]))
    env.reset()
    flags = [env.step([drive])[0][0]['jetbot']['sensors']['camera']['rendered'] for _ in range(4)]
    assert flags == [False, True, False, True]
    env.close()


def test_images_a_caller_holds_never_change_and_no_two_observations_share_them():
    # Observations of every slot hand out the camera's image array itself (no copy); later frames
    # must go elsewhere, whether every slot is drawn again or only some.
    camera = jetbot_camera_cfg.update(resolution=(32, 24), depth=True)
    drive = {'jetbot': {'move_by_speed': [0.5, 2.0]}}
    env = make_env([jetbot_task([camera])] * 4, env_num=2)

    def images(obs, slot):
        reading = obs[slot]['jetbot']['sensors']['camera']
        return reading['rgba'], reading['depth']

    obs, _ = env.reset()
    held = [images(obs, slot) for slot in (0, 1)]
    kept = [(rgba.copy(), depth.copy()) for rgba, depth in held]
    for _ in range(20):
        obs, *_ = env.step([drive, drive])
    moved = images(obs, 0)
    assert not np.array_equal(moved[1], kept[0][1])  # the robot drove: new frames...
    for (rgba, depth), (rgba_then, depth_then) in zip(held, kept, strict=True):
        assert np.array_equal(rgba, rgba_then) and np.array_equal(depth, depth_then)  # ...elsewhere
    env.close()

    # Drawn only when an episode starts: slot 1 alone starts a new one and is drawn alone, into a
    # new array that carries slot 0's frame over; what was handed out before stays as it was.
    env = make_env([jetbot_task([camera])] * 4, env_num=2, rendering_interval=10 ** 6)
    obs, _ = env.reset()
    held = [images(obs, slot) for slot in (0, 1)]
    kept = [(rgba.copy(), depth.copy()) for rgba, depth in held]
    env.step([drive, drive])
    env.reset([1])
    obs, *_ = env.step([drive, drive])
    assert np.array_equal(images(obs, 0)[0], kept[0][0])  # slot 0 was not drawn again
    assert not np.shares_memory(images(obs, 0)[0], held[0][0])
    for (rgba, depth), (rgba_then, depth_then) in zip(held, kept, strict=True):
        assert np.array_equal(rgba, rgba_then) and np.array_equal(depth, depth_then)
    env.close()


def test_overview_shows_every_slot():
    width, height, offset = 320, 240, 4.0
    h1 = H1RobotCfg(controllers=[move_by_speed_cfg])
    images, cameras, worlds = [], [], []
    for robots in ([], [h1]):
        env = make_env([FiniteStepTaskCfg(max_steps=100, robots=robots)] * 4, env_num=4, offset=offset)
        env.reset()
        image = env.render(width, height)
        assert image.shape == (height, width, 3) and image.dtype == np.uint8
        images.append(image)
        cameras.append(overview_camera(env.runner.world, width, height))
        worlds.append(env.runner.world)
        env.close()
    np.testing.assert_allclose(cameras[0].position, cameras[1].position)
    changed = np.abs(images[1].astype(int) - images[0].astype(int)).max(axis=2) > 30
    heads = worlds[1].origins + [0.0, 0.0, 1.3]  # each slot's H1, at chest height
    pixels = cameras[1].project(heads, width, height)
    for slot, (col, row) in enumerate(pixels):
        assert 0 <= col < width and 0 <= row < height, f'slot {slot} is out of view'
        window = changed[max(int(row) - 12, 0):int(row) + 12, max(int(col) - 12, 0):int(col) + 12]
        assert window.sum() >= 10, f'no robot drawn for slot {slot}'
    # The four robots are far apart in the image, and nothing else changed.
    assert min(np.linalg.norm(a - b) for i, a in enumerate(pixels) for b in pixels[i + 1:]) > 40
    near_any = np.zeros_like(changed)
    for col, row in pixels:
        near_any[max(int(row) - 40, 0):int(row) + 40, max(int(col) - 40, 0):int(col) + 40] = True
    assert changed[~near_any].sum() == 0


def test_slot_cameras_see_their_own_slot_culled_to_the_view(wall_scene):
    env = make_env([jetbot_task([jetbot_camera_cfg.update(resolution=(16, 12))], wall_scene)] * 3, env_num=3)
    env.reset()
    pack = env.runner.world.pack(0)
    model = pack.model
    # A slot is its own simulation: the model holds one jetbot and one wall, whatever env_num is.
    assert sum(model.body(b).name == 'jetbot/chassis' for b in range(model.nbody)) == 1
    assert sum(model.geom(g).name == 'scene/wall' for g in range(model.ngeom)) == 1
    culling = pack_render(pack).cameras(16, 12).culling
    (group,) = env.runner.robot_groups.values()
    cam = int(group.sensors['camera'].cam_id[1])
    # The culling works on the drawn model (visual-only geoms, the Jetbot's wheel cylinders among
    # them, are not in the physics model): its state of slot 1, as the renderer loads it.
    state = DrawnState(pack)
    data, drawn = state.load(1), state.model
    groups = culling.camera_groups(cam, data, 16 / 12, 0.01, 100.0)
    wall = drawn.geom('scene/wall').id
    assert groups[wall] == drawn.geom_group[wall]  # ahead: drawn
    ahead = (data.geom_xpos - data.cam_xpos[cam]) @ data.cam_xmat[cam].reshape(3, 3)
    behind = [g for g in culling.cullable if -ahead[g, 2] + drawn.geom_rbound[g] < 0]
    assert behind and all(groups[g] == HIDDEN_GROUP for g in behind)
    env.close()


def test_cameras_and_overview_across_packs(wall_scene):
    """Slots of two structures (a wall, and bare ground) make two packs: each camera sees its own
    slot, each pack has its own render context, and the overview merges the packs."""
    width, height = 320, 240
    camera = jetbot_camera_cfg.update(resolution=(40, 30), depth=True, camera_params=True)
    tasks = [jetbot_task([camera], wall_scene if slot % 2 == 0 else None) for slot in range(4)]
    env = make_env(tasks, env_num=4)
    obs, _ = env.reset()
    world = env.runner.world
    assert len(world.packs) == 2
    for slot in range(4):
        reading = obs[slot]['jetbot']['sensors']['camera']
        expected = WALL_FACE_X - reading['camera_params']['pose']['position'][0]
        if slot % 2 == 0:
            assert abs(reading['depth'][15, 20] - expected) <= 0.02 * expected
        else:
            assert reading['depth'][15, 20] > expected + 0.5  # no wall in this slot
    assert len(camera_renderers(world)) == 2  # one per pack for the one image size
    image = env.render(width, height)
    walls = overview_camera(world, width, height).project(world.origins + [WALL_FACE_X + 0.1, 0.0, 1.0], width, height)
    reddish = (image[..., 0].astype(int) > image[..., 1].astype(int) + 25) & (image[..., 0] > 60)
    for slot, (col, row) in enumerate(walls):
        window = reddish[max(int(row) - 3, 0):int(row) + 4, max(int(col) - 3, 0):int(col) + 4]
        if slot % 2 == 0:
            assert window.sum() >= 5, f'wall of slot {slot} not drawn'
        else:
            assert window.sum() == 0, f'slot {slot} has no wall, yet one is drawn'
    env.close()


def test_camera_config_errors(wall_scene):
    for bad in ({'resolution': (0, 10)}, {'clipping_range_m': (1.0, 0.5)}, {'fovy_deg': 180.0},
                {'position': (0.0, 0.0, 0.1), 'translation': (0.1, 0.0, 0.0)}, {'rgba_': True}):
        with strict_config(), pytest.raises(ValueError):  # strict: the unknown key 'rgba_' is an error too
            RepCameraCfg(name='camera', prim_path='chassis/Camera', **bad)
    env = make_env([jetbot_task([RepCameraCfg(name='camera', prim_path='no_such_link/Camera')], wall_scene)], env_num=1)
    with pytest.raises(ValueError, match='chassis'):
        env.reset()
    env.close()


@pytest.mark.parametrize('suffix', ['.gif', '.mp4'])
def test_video_of_overview_and_camera(tmp_path, wall_scene, suffix):
    if suffix == '.mp4' and not mp4_available():
        pytest.skip('imageio-ffmpeg is not installed')
    camera = jetbot_camera_cfg.update(resolution=(48, 36), depth=True)
    env = make_env([jetbot_task([camera], wall_scene)], env_num=1)
    env.reset()
    drive = {'jetbot': {'move_by_speed': [0.3, 1.0]}}
    overview = VideoRecorder(tmp_path / f'overview{suffix}', fps=10)
    rgba = VideoRecorder(tmp_path / f'camera{suffix}', fps=10)
    depth = VideoRecorder(tmp_path / f'depth{suffix}', fps=10, depth_range=(0.0, 3.0))
    for _ in range(5):
        obs, *_ = env.step([drive])
        reading = obs[0]['jetbot']['sensors']['camera']
        overview.append(env.render(96, 73))  # odd height: padded for H.264
        rgba.append(reading['rgba'])
        depth.append(reading['depth'])
    env.close()
    for video, size in ((overview, (73, 96)), (rgba, (36, 48)), (depth, (36, 48))):
        path = video.close()
        assert path.endswith(suffix) and os.path.getsize(path) > 0 and video.frames == 5
        if suffix == '.gif':
            from PIL import Image

            with Image.open(path) as gif:  # Pillow merges repeated frames, adding up their durations
                durations = []
                for index in range(gif.n_frames):
                    gif.seek(index)
                    durations.append(gif.info['duration'])
                assert sum(durations) == 500 and gif.size == size[::-1]
        else:
            import imageio

            with imageio.get_reader(path) as reader:
                frames = [frame for frame in reader]
            assert len(frames) == 5 and frames[0].shape[0] >= size[0] and frames[0].shape[1] == size[1]
    with pytest.raises(ValueError, match='shape'):
        with VideoRecorder(tmp_path / 'bad.gif') as video:
            video.append(np.zeros((4, 4, 3), np.uint8))
            video.append(np.zeros((5, 4, 3), np.uint8))


def test_render_needs_a_built_open_env_and_headless_never_opens_a_viewer(monkeypatch):
    monkeypatch.delenv('DISPLAY', raising=False)
    monkeypatch.delenv('WAYLAND_DISPLAY', raising=False)
    env = make_env([jetbot_task([])], env_num=1, headless=False)
    assert env._viewer is None  # no display: never tries
    with pytest.raises(RuntimeError, match='reset'):
        env.render(64, 48)
    env.reset()
    env.step([None])
    assert env.render(64, 48).shape == (48, 64, 3)
    env.close()
    with pytest.raises(RuntimeError, match='closed'):
        env.render(64, 48)
