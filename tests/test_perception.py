"""Perception annotations: semantic labels, segmentation images, tight 2D boxes and landmarks,
Isaac ``camera_params`` keys and the sky, checked against geometry (projected corners, depth)."""

from __future__ import annotations

import contextlib
import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.backend.mujoco.render.semantics import SemanticTable  # noqa: E402
from internutopia.core.backend.mujoco.usd_scene import scene_to_spec  # noqa: E402
from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.config.sensor import SensorCfg  # noqa: E402
from internutopia.core.sensor.camera import ICamera  # noqa: E402
from internutopia.core.sensor.sensor import BaseSensor  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.objects.cube import VisualCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.sensors import RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from internutopia_extension.sensors.annotations import GL_TO_CV  # noqa: E402
from internutopia_extension.sensors.rep_camera import forward_camera_quat  # noqa: E402

WIDTH, HEIGHT = 96, 72
#: The crate: a 0.3 m cube floating at camera-ish height 1.5 m ahead (only sky behind it).
CRATE = dict(scale=(0.3, 0.3, 0.3), label='crate', color=(0.9, 0.2, 0.1))
CRATE_AHEAD = (1.5, 0.0, 0.6)


def camera_cfg() -> RepCameraCfg:
    return RepCameraCfg(name='cam', prim_path='chassis/cam', resolution=(WIDTH, HEIGHT), depth=True, camera_params=True,
                        landmarks=True, semantic_segmentation=True, instance_segmentation=True,
                        position=(0.0, 0.0, 0.3), orientation=forward_camera_quat(0.0))


def task(*objects) -> FiniteStepTaskCfg:
    return FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg(sensors=[camera_cfg()])], objects=list(objects))


@pytest.fixture(scope='module')
def readings():
    """One env, four slots 1 m apart (their cells overlap in space; each slot is its own world):
    0 the crate ahead; 1 the crate behind the camera; 2 the crate with a board in front of most
    of it (the board listed, so drawn, first); 3 the crate cut by the left image edge."""
    tasks = [
        task(VisualCubeCfg(name='crate', position=CRATE_AHEAD, **CRATE)),
        task(VisualCubeCfg(name='crate', position=(-2.0, 0.0, 0.6), **CRATE)),
        task(VisualCubeCfg(name='board', position=(0.8, -0.12, 0.6), scale=(0.05, 0.3, 0.5), color=(0.2, 0.2, 0.9)),
             VisualCubeCfg(name='crate', position=CRATE_AHEAD, **CRATE)),
        task(VisualCubeCfg(name='crate', position=(1.5, 1.0, 0.6), **CRATE)),
    ]
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=4, env_offset_size=1.0,
                     metrics_save_path='none', task_configs=tasks))
    try:
        env.reset()
        obs, *_ = env.step([None] * 4)
        yield [o['jetbot']['sensors']['cam'] for o in obs]
    finally:
        env.close()


def crate_box(reading) -> np.void:
    boxes = reading['bounding_box_2d_tight']
    labels = boxes['info']['idToLabels']
    rows = [row for row in boxes['data'] if labels[str(row['semanticId'])]['class'] == 'crate']
    assert len(rows) == 1, f'expected one crate box, got {boxes}'
    return rows[0]


def project_upstream(params, points: np.ndarray) -> np.ndarray:
    """Pixel coordinates ``(N, 2)`` of env-local ``points`` by InternUtopia's formulas on Isaac's
    ``camera_params`` keys (its ``RepCamera.get_intrinsic_matrix`` and extrinsics)."""
    width, height = params['renderProductResolution']
    focal = params['cameraFocalLength'] / 10.0
    horizontal, _ = params['cameraAperture'] / 10.0
    vertical = horizontal * float(height) / width
    intrinsics = np.array([[width * focal / horizontal, 0, width * 0.5], [0, height * focal / vertical, height * 0.5], [0, 0, 1]])
    extrinsics = GL_TO_CV @ params['cameraViewTransform'].reshape(4, 4).T
    camera = (extrinsics @ np.c_[points, np.ones(len(points))].T)[:3]
    pixels = intrinsics @ (camera / camera[2])
    return pixels[:2].T


def cube_corners(centre, scale) -> np.ndarray:
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    return np.asarray(centre) + signs * np.asarray(scale) / 2


def test_labels_ids_and_layouts(readings):
    reading = readings[0]
    semantic = reading['semantic_segmentation']
    labels = {entry['class'] for entry in semantic['info']['idToLabels'].values()}
    assert {'BACKGROUND', 'UNLABELLED', 'crate', 'floor', 'JetbotRobot'} <= labels
    assert semantic['data'].dtype == np.int32 and semantic['data'].shape == (HEIGHT, WIDTH)
    instance = reading['instance_segmentation']
    assert instance['data'].dtype == np.int32 and instance['data'].shape == (HEIGHT, WIDTH)
    assert instance['info']['idToLabels']['0'] == 'BACKGROUND'
    assert 'crate' in instance['info']['idToLabels'].values()
    boxes = reading['bounding_box_2d_tight']
    assert boxes['data'].dtype.names == ('semanticId', 'x_min', 'y_min', 'x_max', 'y_max', 'occlusionRatio')
    assert sorted(reading['landmarks']) == ['crate', 'floor']  # the things in view (upstream's landmarks)
    # The semantic image is the instance image relabelled.
    crate_instance = int(next(k for k, v in instance['info']['idToLabels'].items() if v == 'crate'))
    crate_semantic = int(next(k for k, v in semantic['info']['idToLabels'].items() if v['class'] == 'crate'))
    np.testing.assert_array_equal(instance['data'] == crate_instance, semantic['data'] == crate_semantic)


def test_box_matches_the_projection_of_the_corners(readings):
    reading = readings[0]
    pixels = project_upstream(reading['camera_params'], cube_corners(CRATE_AHEAD, CRATE['scale']))
    box = crate_box(reading)
    # Pixel i covers [i, i + 1): the box's inclusive bounds are the floors of the projected extremes.
    expected = np.r_[np.floor(pixels.min(axis=0)), np.floor(pixels.max(axis=0))]
    np.testing.assert_allclose([box['x_min'], box['y_min'], box['x_max'], box['y_max']], expected, atol=1.0)
    assert box['occlusionRatio'] < 0.1


def test_camera_params_project_a_point_onto_its_pixel(readings):
    """A point projected with upstream's formulas from the Isaac keys lands on the pixel that shows
    it: the crate's front-face centre hits a crate pixel at the face's depth."""
    reading = readings[0]
    params = reading['camera_params']
    front = np.array([CRATE_AHEAD[0] - 0.15, 0.0, CRATE_AHEAD[2]])
    u, v = project_upstream(params, front[None])[0]
    col, row = int(np.floor(u)), int(np.floor(v))
    semantic = reading['semantic_segmentation']
    assert semantic['info']['idToLabels'][str(semantic['data'][row, col])]['class'] == 'crate'
    axis_depth = -(params['cameraViewTransform'].reshape(4, 4).T @ np.r_[front, 1.0])[2]
    assert reading['depth'][row, col] == pytest.approx(axis_depth, abs=0.01)
    np.testing.assert_allclose(params['intrinsics'][0, 0], WIDTH * params['cameraFocalLength'] / params['cameraAperture'][0])
    assert tuple(params['renderProductResolution']) == (WIDTH, HEIGHT)


def test_segmentation_agrees_with_depth(readings):
    """Around the crate only sky is behind it: the pixels the segmentation gives the crate are
    exactly those whose depth is the crate's."""
    reading = readings[0]
    box = crate_box(reading)
    region = (slice(max(box['y_min'] - 3, 0), box['y_max'] + 4), slice(max(box['x_min'] - 3, 0), box['x_max'] + 4))
    semantic = reading['semantic_segmentation']
    crate_id = int(next(k for k, v in semantic['info']['idToLabels'].items() if v['class'] == 'crate'))
    is_crate = semantic['data'][region] == crate_id
    near = reading['depth'][region] < 2.0
    assert is_crate.sum() > 50
    np.testing.assert_array_equal(is_crate, near)


def test_occluded_and_cut_crates(readings):
    visible, occluded, cut = crate_box(readings[0]), crate_box(readings[2]), crate_box(readings[3])
    assert occluded['occlusionRatio'] > visible['occlusionRatio'] + 0.3
    assert occluded['x_max'] - occluded['x_min'] < visible['x_max'] - visible['x_min']
    assert 'board' in readings[2]['landmarks']
    # Cut by the left edge: the box is clipped to the image, and the edge is not occlusion.
    assert cut['x_min'] == 0 and cut['x_max'] < WIDTH // 2
    assert cut['occlusionRatio'] < 0.1


def test_occlusion_ratio_is_the_hidden_share_of_the_thing_drawn_alone(readings):
    """Slot 2's crate has the pose of slot 0's, which nothing hides: its occlusion ratio is one minus
    its visible pixels over slot 0's (the board in front is drawn before it, so a pass that kept
    depth would lose the crate's hidden pixels)."""

    def crate_pixels(reading) -> int:
        instances = reading['instance_segmentation']
        ids = [int(i) for i, name in instances['info']['idToLabels'].items() if name == 'crate']
        return int(np.isin(instances['data'], ids).sum())

    whole, seen = crate_pixels(readings[0]), crate_pixels(readings[2])
    assert 0 < seen < whole / 2
    assert crate_box(readings[0])['occlusionRatio'] == 0.0
    np.testing.assert_allclose(crate_box(readings[2])['occlusionRatio'], 1 - seen / whole, atol=1e-6)


def test_other_slots_things_never_appear(readings):
    """Slot 1's crate is behind its camera; the crates and board of the other slots, 1 m away on the
    grid and straight ahead, are not drawn in slot 1 (nor the board outside slot 2)."""
    behind = readings[1]
    assert 'crate' not in behind['landmarks']
    labels = behind['semantic_segmentation']['info']['idToLabels']
    drawn = {labels[str(i)]['class'] for i in np.unique(behind['semantic_segmentation']['data'])}
    assert drawn <= {'BACKGROUND', 'floor'}
    for slot in (0, 1, 3):
        assert 'board' not in readings[slot]['landmarks']


def test_sky_is_light_and_leaves_depth_and_ids_alone(readings):
    reading = readings[1]
    top = reading['rgba'][:5, :, :3].astype(int)
    assert top.sum(axis=-1).min() > 450 and np.all(top[..., 2] > top[..., 0])  # light, blue over red
    assert np.all(reading['depth'][:5] == pytest.approx(1000.0))
    assert np.all(reading['semantic_segmentation']['data'][:5] == 0)


def test_usd_semantics_are_kept_and_roles_label_the_rest(tmp_path):
    """Both of Isaac's ways of labelling prims survive scene conversion; a labelled Xform labels
    the geoms below it; unlabelled walls and floors get their role."""
    path = tmp_path / 'labelled.usda'
    path.write_text('''#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def Plane "GroundPlane"
    {
        uniform token axis = "Z"
        double length = 4
        double width = 4
    }
    def Cube "WallNorth"
    {
        double size = 1
        double3 xformOp:translate = (0, 2, 0.5)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
    def Xform "Chair"
    {
        string semantic:Semantics:params:semanticData = "chair"
        string semantic:Semantics:params:semanticType = "class"
        def Cube "Seat"
        {
            double size = 0.5
        }
        def Cube "Back"
        {
            double size = 0.2
        }
    }
    def Sphere "Lamp"
    {
        token[] semantics:labels:class = ["lamp"]
        double radius = 0.1
    }
    def Sphere "Vase"
    {
        double radius = 0.1
    }
}
''')
    scene = scene_to_spec(str(path))
    world = mujoco.MjSpec()
    world.attach(scene, prefix='scene/', frame=world.worldbody.add_frame())
    model = world.compile()
    table = SemanticTable.build(model, {})
    label_of = {}
    for geom in range(model.ngeom):
        instance = int(table.geom_instance[geom + 1])
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom)
        label_of[name] = (table.labels[table.instance_semantic[instance]] if instance else None,
                          table.instance_names[instance])
    assert label_of['scene/World/Chair/Seat'] == ('chair', '/scene/World/Chair')
    assert label_of['scene/World/Chair/Back'] == ('chair', '/scene/World/Chair')
    assert label_of['scene/World/Lamp'] == ('lamp', '/scene/World/Lamp')
    assert label_of['scene/World/GroundPlane'][0] == 'floor'
    assert label_of['scene/World/WallNorth'][0] == 'wall'
    assert label_of['scene/World/Vase'][0] is None


class MadeCameraCfg(SensorCfg):
    type: str = 'MadeCamera'
    resolution: tuple[int, int] = (WIDTH, HEIGHT)


@BaseSensor.register('MadeCamera')
class MadeCamera(BaseSensor):
    """An upstream-style sensor that makes its camera with ``ICamera.create`` in ``post_reset``, as
    InternUtopia's ``RepCamera`` and downstream sensors do."""

    def __init__(self, config, robot, scene=None):
        super().__init__(config, robot, scene)
        self._camera = None

    def post_reset(self):
        self._camera = ICamera.create(name=self.name, prim_path=self._robot.config.prim_path + '/' + self.config.prim_path,
                                      rgba=True, distance_to_image_plane=True, bounding_box_2d_tight=True, camera_params=True,
                                      resolution=self.config.resolution, translation=(0.0, 0.0, 0.3),
                                      orientation=forward_camera_quat(0.0))

    def get_data(self):
        return {'rgba': self._camera.get_rgba(), 'depth': self._camera.get_distance_to_image_plane(),
                'boxes': self._camera.get_bounding_box_2d_tight(), 'params': self._camera.get_camera_params()}


def test_icamera_create_makes_a_camera_on_a_link_as_upstream_sensors_do():
    """A camera made by ``ICamera.create`` in a sensor's ``post_reset`` sees what a configured
    camera at the same mount sees, and boxes the same things."""
    robot = JetbotRobotCfg(sensors=[camera_cfg(), MadeCameraCfg(name='made', prim_path='chassis/made')])
    tasks = [FiniteStepTaskCfg(max_steps=10, robots=[robot], objects=[VisualCubeCfg(name='crate', position=CRATE_AHEAD, **CRATE)])]
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=1, metrics_save_path='none',
                    task_configs=tasks)) as env:
        env.reset()
        obs, *_ = env.step([None])
        sensors = obs[0]['jetbot']['sensors']
        made, configured = sensors['made'], sensors['cam']
        assert made['rgba'].shape == (HEIGHT, WIDTH, 4)
        # (two cameras at one pose draw the same pixels up to rounding: 3 levels at most, but for a
        # pixel or two on a silhouette's edge, where rounding decides which side a pixel falls)
        levels = np.abs(made['rgba'].astype(int) - configured['rgba'].astype(int)).max(axis=2)
        assert (levels > 3).sum() <= 3 and levels.max() <= 32
        np.testing.assert_allclose(made['depth'], configured['depth'], rtol=1e-4)
        np.testing.assert_allclose(made['params']['cameraViewTransform'], configured['camera_params']['cameraViewTransform'],
                                   atol=1e-6)
        assert made['boxes']['data'].tolist() == configured['bounding_box_2d_tight']['data'].tolist()
    with pytest.raises(ValueError, match='post_reset'):
        ICamera.create(name='loose', prim_path='/jetbot/chassis/cam')


def test_sky_composite_compiled_matches_numpy(monkeypatch):
    """The sky goes behind drawn pixels by their coverage (alpha): opaque pixels are kept, empty
    ones get the sky, partly covered ones blend; the compiled pass equals the numpy one."""
    from internutopia.core.backend.mujoco.render import sky

    rng = np.random.default_rng(3)
    source = rng.integers(0, 256, size=(30, 40, 4), dtype=np.uint8)
    source[..., 3] = rng.choice([0, 255, 100], size=(30, 40))
    source[source[..., 3] == 0, :3] = 0  # nothing drawn: MuJoCo's black
    pitched = np.array([[1.0, 0.0, 0.0], [0.0, 0.8, -0.6], [0.0, 0.6, 0.8]])  # looking up a bit
    compiled = np.empty_like(source)  # RGBA: the kernel on whole pixels
    sky.sky_composite(source, compiled, pitched, 60.0)
    rgb = np.empty((30, 40, 3), np.uint8)  # RGB: the kernel on channels
    sky.sky_composite(source, rgb, pitched, 60.0)
    with monkeypatch.context() as patch:
        patch.setattr(sky, '_LITTLE_ENDIAN', False)  # (as on a big-endian machine: channels for RGBA too)
        by_channels = np.empty_like(source)
        sky.sky_composite(source, by_channels, pitched, 60.0)
    monkeypatch.setattr(sky, '_sky_kernel', type('Off', (), {'available': False})())
    reference = np.empty_like(source)
    sky.sky_composite(source, reference, pitched, 60.0)
    np.testing.assert_array_equal(compiled, reference)
    np.testing.assert_array_equal(by_channels, reference)
    np.testing.assert_array_equal(rgb, reference[..., :3])
    flipped = source[::-1]
    opaque = flipped[..., 3] == 255
    np.testing.assert_array_equal(reference[opaque][:, :3], flipped[opaque][:, :3])
    assert np.all(reference[..., 3] == 255)
    empty = reference[flipped[..., 3] == 0][:, :3].astype(int)
    assert empty.sum(axis=1).min() > 450 and np.all(empty[:, 2] > empty[:, 0])


def test_the_perception_page_example_runs(tmp_path, monkeypatch, capsys):
    """docs/perception.md's Python example runs as written and prints what the page says."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / 'docs' / 'perception.md').read_text(encoding='utf-8')
    (block,) = re.findall(r'^```python\n(.*?)^```', page, flags=re.S | re.M)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, 'docs/perception.md', 'exec'), {'__name__': 'docs_perception'})  # noqa: S102 - the page's own example
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "['crate', 'floor']"
    assert any(line.startswith('crate ') for line in printed[1:])


def test_box_pass_compiled_matches_numpy():
    """The compiled one-pass box finder equals the bincount version, frame by frame and instance by instance."""
    from internutopia_extension.sensors.annotations import visible_boxes, visible_boxes_numpy

    rng = np.random.default_rng(5)
    images = np.zeros((3, 40, 50), dtype=np.int32)
    images[0, 5:20, 10:30] = 2
    images[0, 30:, 45:] = 1
    images[2] = rng.integers(0, 4, size=(40, 50))
    for got, want in zip(visible_boxes(images, 4), visible_boxes_numpy(images, 4), strict=True):
        np.testing.assert_array_equal(got, want)
    owners, bounds, pixels = visible_boxes_numpy(images, 4)
    assert owners[:2].tolist() == [[0, 1], [0, 2]] and bounds[1].tolist() == [10, 5, 29, 19] and pixels[1] == 300
    assert not np.any(owners[:, 0] == 1)  # an empty frame has no boxes


def test_occludable_geoms_are_those_another_thing_may_hide():
    """Only geoms that another thing's geom may hide are drawn again for occlusion ratios: a
    sphere behind another (seen from the eye) may be hidden, the one in front may not; one resting
    in the floor may be hidden by it, one above it not; the floor by anything above it."""
    import mujoco

    from internutopia.core.backend.mujoco.render.scene import occludable_geoms

    model = mujoco.MjModel.from_xml_string("""<mujoco><worldbody>
      <geom name="floor" type="plane" size="0 0 1"/>
      <geom name="front" type="sphere" size="0.2" pos="2 0 1"/>
      <geom name="back" type="sphere" size="0.2" pos="4 0.1 1"/>
      <geom name="resting" type="sphere" size="0.2" pos="3 -2 0.1"/>
      <geom name="aside" type="sphere" size="0.2" pos="3 2 1"/>
      <geom name="back_part" type="sphere" size="0.1" pos="4 0.1 1.25"/>
    </worldbody></mujoco>""")
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    geoms = np.arange(model.ngeom)
    owners = np.array([1, 2, 3, 4, 5, 3])  # back_part belongs to back: it never hides it
    hidden = dict(zip(['floor', 'front', 'back', 'resting', 'aside', 'back_part'],
                      occludable_geoms(model, data, np.array([0.0, 0.0, 1.0]), geoms, owners).tolist(), strict=True))
    assert hidden == {'floor': True, 'front': False, 'back': True, 'resting': True, 'aside': False, 'back_part': True}
    owners[1] = 3  # front is now part of back's thing: its own part does not hide it
    assert not occludable_geoms(model, data, np.array([0.0, 0.0, 1.0]), geoms[1:3], owners[1:3]).any()


def test_coverage_counts_compiled_match_numpy_and_by_hand():
    """Pixels each thing shows, and where a coverage pass says it is hidden: compiled and numpy
    agree, and match a small case counted by hand."""
    from internutopia.core.backend.mujoco.render.coverage import hidden_pixels, shown_pixels
    from internutopia.core.util.jit import numpy_only

    segmentation = np.array([[-1, 0, 0], [1, 1, 2]], dtype=np.int32)  # geom ids, top row first
    owners = np.array([1, 2, 0], dtype=np.int32)  # geom 2 is unlabelled
    # Coverage colours, bottom row first: thing 1 is bit 0, thing 2 bit 1.
    codes = np.array([[0b11, 0b01, 0b01], [0b01, 0b01, 0b10]], dtype=np.uint32) | np.uint32(0xFF000000)
    rng = np.random.default_rng(3)
    big_segmentation = rng.integers(-1, 40, size=(30, 41)).astype(np.int32)
    big_owners = rng.integers(0, 30, size=40).astype(np.int64)
    big_codes = rng.integers(0, 1 << 24, size=(30, 41)).astype(np.uint32)
    things = np.arange(1, 25)
    results = []
    for numpy in (False, True):
        with numpy_only() if numpy else contextlib.nullcontext():
            results.append((shown_pixels(segmentation, owners, 3), hidden_pixels(segmentation, owners, codes, np.array([1, 2]), 3),
                            shown_pixels(big_segmentation, big_owners, 30),
                            hidden_pixels(big_segmentation, big_owners, big_codes, things, 30)))
    for compiled, reference in zip(*results, strict=True):
        np.testing.assert_array_equal(compiled, reference)
    shown, hidden = results[0][:2]
    assert shown.tolist() == [0, 2, 2]
    # Top row (the codes' second row): bit 0 where nothing shows (thing 1 hidden), bit 0 where thing 1
    # shows (its own), bit 1 where thing 1 shows (thing 2 hidden). Bottom row: both bits where thing 2
    # shows (thing 1 hidden), bit 0 where thing 2 shows and where the unlabelled geom shows (thing 1 hidden).
    assert hidden.tolist() == [0, 4, 1]
