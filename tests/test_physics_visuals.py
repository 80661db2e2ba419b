"""Headless physics models leave out what is only drawn (:mod:`internutopia.core.backend.mujoco.visuals`):
the same motion bit for bit, the same pictures where something draws, a fraction of the model."""

from __future__ import annotations

import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from internutopia.core.backend.mujoco.visuals import (  # noqa: E402
    compile_physics,
    discarded_visuals,
    drawn_bytes,
    drawn_model,
    explicit_inertials,
    when_drawn,
)
from internutopia.core.backend.mujoco.world import MujocoWorld  # noqa: E402
from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.viewer.geometry import body_meshes  # noqa: E402
from internutopia_extension.configs.objects.cube import VisualCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1RobotCfg, h1_tp_camera_cfg, move_by_speed_cfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402
from tests.test_perception import CRATE, CRATE_AHEAD, MadeCameraCfg  # noqa: E402

WALK = np.array([0.8, 0.0, 0.3])  # forward and turning: both legs in and out of contact


def looks_xml(bodies: str) -> str:
    """A model of ``bodies`` that may use ``m``, a mesh to draw (a geom of it that collides with
    nothing is a look)."""
    return f'<mujoco><asset><mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset><worldbody>{bodies}</worldbody></mujoco>'


#: One free body with a collision sphere and a look.
BODY_WITH_LOOKS = '<body name="b"><freejoint/><geom size="0.1"/><geom type="mesh" mesh="m" contype="0" conaffinity="0"/>{}</body>'


def h1_env(keep_visuals: bool, env_num: int = 2, sensors: list | None = None) -> Env:
    robot = H1RobotCfg(controllers=[move_by_speed_cfg], sensors=sensors or [])
    env = Env(Config(env_num=env_num, metrics_save_path='none',
                     task_configs=[FiniteStepTaskCfg(max_steps=10 ** 6, robots=[robot])] * env_num))
    env.runner.world.keep_visuals = keep_visuals  # (as a world with the interactive viewer has it)
    return env


def test_a_headless_walking_h1_moves_bit_for_bit_as_with_its_visual_meshes():
    runs = {}
    for keep in (True, False):
        with h1_env(keep) as env:
            env.reset()
            pack = env.runner.world.pack(0)
            for _ in range(150):
                out = env.step_arrays({'h1': {'move_by_speed': np.tile(WALK, (2, 1))}})
            runs[keep] = (pack.model.nmesh, pack.model.nbuffer, pack.drawn_model.nmesh, pack.drawn_model is pack.model,
                          out.obs['h1']['position'], out.obs['h1']['joint_positions'], pack.data.qvel[pack.slots].copy())
    full, light = runs[True], runs[False]
    assert full[0] == 21 and full[1] > 50e6 and full[3]  # H1's 21 visual meshes, 52 MB
    assert light[0] == 0 and light[1] < 1e6 and light[2] == 21 and not light[3]  # drawn from a model of its own
    assert full[4][:, 0].min() > 0.5  # both walked forward, on their legs
    for kept, left_out in zip(full[4:], light[4:], strict=True):
        assert np.array_equal(kept, left_out)


def test_the_overview_and_the_web_viewer_draw_the_same_robot():
    images, meshes = {}, {}
    for keep in (True, False):
        with h1_env(keep) as env:
            env.reset()
            for _ in range(30):
                env.step_arrays({'h1': {'move_by_speed': np.tile(WALK, (2, 1))}})
            images[keep] = env.render(320, 240)
            meshes[keep] = body_meshes(env.runner.world.pack(0).drawn_model)
    assert np.array_equal(images[True], images[False])
    assert (images[False].astype(int) - images[False].mean(axis=(0, 1))).std() > 10  # a picture, not a blank
    assert len(meshes[True]) == len(meshes[False]) > 10
    for kept, drawn in zip(meshes[True], meshes[False], strict=True):
        assert (kept.body, kept.rgb) == (drawn.body, drawn.rgb)
        assert np.array_equal(kept.vertices, drawn.vertices) and np.array_equal(kept.faces, drawn.faces)


def test_a_robot_camera_draws_the_same_frames_while_its_physics_leaves_the_looks_out():
    # A camera draws the drawn model (compiled at its first picture); the physics model leaves H1's 21 meshes out as without a camera, and the frames,
    # depth included, are the same to the pixel as with every visual kept.
    camera = h1_tp_camera_cfg.update(resolution=(64, 48), enable=True, depth=True)  # (it sees the robot)
    frames, motion = {}, {}
    for keep in (True, False):
        with h1_env(keep, env_num=1, sensors=[camera]) as env:
            env.reset()
            pack = env.runner.world.pack(0)
            assert pack.model.nmesh == (21 if keep else 0) and pack.drawn_model.nmesh == 21
            assert (pack.drawn_model is pack.model) is keep
            for _ in range(40):
                obs, *_ = env.step([{'h1': {'move_by_speed': list(WALK)}}])
            frames[keep] = obs[0]['h1']['sensors']['tp_camera']
            motion[keep] = obs[0]['h1']['position']
    kept, drawn = frames[True], frames[False]
    assert np.array_equal(kept['rgba'], drawn['rgba']) and np.array_equal(kept['depth'], drawn['depth'])
    assert (drawn['rgba'][..., :3].astype(int) - drawn['rgba'][..., :3].mean(axis=(0, 1))).std() > 5  # a picture
    assert np.array_equal(motion[True], motion[False]) and motion[False][0] > 0.02  # it set off, the same


def test_a_robot_files_camera_that_nothing_draws_costs_nothing_until_a_first_picture():
    # Aliengo's robot file has a camera of its own (robotcam) that no sensor of this config draws:
    # its drawn model (the meshes) is compiled by the first picture, which the estimate then counts.
    from internutopia_extension.configs.robots.aliengo import AliengoRobotCfg

    task = FiniteStepTaskCfg(max_steps=10 ** 6, robots=[AliengoRobotCfg()])
    with Env(Config(env_num=1, metrics_save_path='none', task_configs=[task])) as env:
        env.reset()
        world = env.runner.world
        pack = world.pack(0)
        assert pack.model.ncam == 1 and pack.model.nmesh == 0 and drawn_bytes(pack.model) == 0.0
        before = world.estimated_peak_bytes
        image = env.render(96, 72)
        assert pack.drawn_model.nmesh > 0 and drawn_bytes(pack.model) == pack.drawn_model.nbuffer > 1e6
        assert world.estimated_peak_bytes >= before + pack.drawn_model.nbuffer  # its compile counted, when it came
        assert (image.astype(int) - image.mean(axis=(0, 1))).std() > 5  # a picture


def test_a_part_drawn_from_the_first_step_has_its_drawn_model_compiled_with_the_structure():
    # A camera sensor's structure: compiled at once, before the pack and the renderer (they reuse
    # what the compile frees: compiled at the first picture, an H1 with a camera peaked 90 MB
    # higher); any other structure: not until something draws it.
    from internutopia.core.backend.parts import SlotPart

    xml = looks_xml(BODY_WITH_LOOKS.format('<camera name="c"/>'))
    compiled = {}
    for draws in (True, False):
        world = MujocoWorld(SimConfig(), 1, 1.0)
        model = world.compile_slot([SlotPart('robot/', mujoco.MjSpec.from_string(xml), draws=draws)])
        compiled[draws] = (model.nmesh, model.ncam, drawn_bytes(model) > 0, world.estimated_peak_bytes)
        drawn_model(model)  # a first picture
        compiled[draws] += (world.estimated_peak_bytes,)
    assert compiled[True][:3] == (0, 1, True) and compiled[False][:3] == (0, 1, False)
    assert compiled[True][3] > compiled[False][3] and compiled[False][4] > compiled[False][3]  # counted when it came
    assert compiled[True][4] == compiled[True][3]  # (nothing more to count)


def test_a_world_whose_looks_were_never_drawn_is_freed_when_dropped():
    # The count of a drawn model's compile waits beside the model in a global table (weak keys):
    # it holds the world weakly, or the world, its packs and their models would keep one another
    # alive there for as long as nothing drew the looks.
    import gc
    import weakref

    from internutopia.core.backend.parts import SlotPart

    xml = looks_xml(BODY_WITH_LOOKS.format(''))
    world = MujocoWorld(SimConfig(), 2, 1.0)
    world.place({0: 'box', 1: 'box'}, lambda slot: [SlotPart('robot/', mujoco.MjSpec.from_string(xml))])
    world.step()
    model = world.pack(0).model
    assert discarded_visuals(model) and drawn_bytes(model) == 0.0  # its looks never drawn
    world_ref, model_ref = weakref.ref(world), weakref.ref(model)
    del world, model
    gc.collect()
    assert world_ref() is None and model_ref() is None


def test_render_threads_asking_at_once_share_one_drawn_model_compiled_once():
    import threading

    # Bodies enough that the drawn model's compile takes a while (tens of ms): threads overlap.
    bodies = ''.join(f'<body name="b{i}" pos="{i} 0 0"><freejoint/><geom size="0.1"/>'
                     f'<geom type="mesh" mesh="m" contype="0" conaffinity="0"/></body>' for i in range(400))
    spec = mujoco.MjSpec.from_string(looks_xml(bodies))
    model = compile_physics(spec, keep_visuals=False)
    hooked, drawn, start = [], [], threading.Barrier(4)
    when_drawn(model, hooked.append)

    def ask():
        start.wait()
        drawn.append(drawn_model(model))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert model.ngeom == 400 and len({id(m) for m in drawn}) == 1 and drawn[0].ngeom == 800 and hooked == drawn[:1]
    when_drawn(compile_physics(mujoco.MjSpec.from_string('<mujoco><worldbody><geom size="1"/></worldbody></mujoco>'), False),
               hooked.append)  # (nothing left out: it draws as it is, and no hook is kept or called)
    assert len(hooked) == 1


def test_the_interactive_viewer_shows_a_slot_from_its_drawn_model(monkeypatch):
    # MuJoCo's passive viewer needs a display; a stand-in window records what it is given and what
    # it holds at each sync. What it is given is real: the slot's state posed in the drawn model,
    # while the physics model (headless=False as well) leaves the looks out.
    import contextlib

    import mujoco.viewer

    from internutopia.core.backend.mujoco.render.viewer import PassiveViewer

    class Window:
        def __init__(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
            self.model, self.data, self.shown = model, data, []

        def is_running(self) -> bool:
            return True

        def lock(self) -> contextlib.AbstractContextManager:
            return contextlib.nullcontext()

        def sync(self) -> None:
            self.shown.append(self.data.xpos.copy())

        def close(self) -> None:
            pass

    windows: list[Window] = []
    monkeypatch.setattr(mujoco.viewer, 'launch_passive', lambda model, data, **_: windows.append(Window(model, data)) or windows[-1])
    assert not MujocoWorld(SimConfig(headless=False), 1, 1.0).keep_visuals
    with h1_env(False, env_num=1) as env:
        env.reset()
        viewer = PassiveViewer(env.runner.world)
        for _ in range(20):
            env.step_arrays({'h1': {'move_by_speed': WALK[None]}})
            viewer.sync()
        pack = env.runner.world.pack(0)
        (window,) = windows
        assert window.model is pack.drawn_model and window.model.nmesh == 21 and pack.model.nmesh == 0
        assert len(window.shown) == 20 and not np.array_equal(window.shown[0], window.shown[-1])  # it follows the walk
        assert np.array_equal(window.shown[-1], pack.mjdata(0).xpos)  # every body where the physics has it
        viewer.close()


def _spec(visual_geom: bool, rangefinder: bool = False) -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(name='box', pos=[0, 0, 1])
    body.add_freejoint()
    body.add_geom(name='hull', size=[0.1, 0.1, 0.1], type=mujoco.mjtGeom.mjGEOM_BOX)
    if visual_geom:
        body.add_geom(name='look', size=[0.2, 0, 0], contype=0, conaffinity=0, group=2)
    if rangefinder:
        spec.worldbody.add_site(name='eye', pos=[1, 0, 1])
        spec.add_sensor(type=mujoco.mjtSensor.mjSENS_RANGEFINDER, objtype=mujoco.mjtObj.mjOBJ_SITE, objname='eye', intprm=[1, 0, 0])
    return spec


def test_only_what_the_physics_never_reads_is_left_out():
    # A geom that collides with nothing: left out, and the drawn model has it.
    model = compile_physics(_spec(visual_geom=True), keep_visuals=False)
    assert model.ngeom == 1 and discarded_visuals(model)
    assert drawn_model(model).ngeom == 2 and drawn_model(model) is drawn_model(model)  # compiled once
    # Nothing to leave out: the model draws as it is.
    plain = compile_physics(_spec(visual_geom=False), keep_visuals=False)
    assert plain.ngeom == 1 and not discarded_visuals(plain) and drawn_model(plain) is plain
    # A rangefinder's ray hits every geom: its model keeps them; so does a world that asks to.
    for spec, keep in ((_spec(True, rangefinder=True), False), (_spec(True), True)):
        kept = compile_physics(spec, keep_visuals=keep)
        assert kept.ngeom == 2 and not discarded_visuals(kept) and drawn_model(kept) is kept


def test_a_camera_made_at_run_time_draws_what_the_physics_left_out():
    # An upstream-style sensor makes its camera in post_reset (ICamera.create): the structure's spec
    # had no camera, so its physics model left out the visual-only crate and the Jetbot's looks;
    # the camera draws them from the drawn model, the same pixels, depth and boxes as with them kept.
    frames = {}
    for keep in (True, False):
        robot = JetbotRobotCfg(sensors=[MadeCameraCfg(name='made', prim_path='chassis/made')])
        task = FiniteStepTaskCfg(max_steps=10, robots=[robot], objects=[VisualCubeCfg(name='crate', position=CRATE_AHEAD, **CRATE)])
        with Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), env_num=1, metrics_save_path='none',
                        task_configs=[task])) as env:
            env.runner.world.keep_visuals = keep
            env.reset()
            assert discarded_visuals(env.runner.world.pack(0).model) is not keep
            obs, _, _, _, infos = env.step([None])
            assert obs[0] is not None, infos  # (before the drawn model drew it, this frame failed the episode)
            frames[keep] = obs[0]['jetbot']['sensors']['made']
    kept, drawn = frames[True], frames[False]
    assert np.array_equal(kept['rgba'], drawn['rgba']) and np.array_equal(kept['depth'], drawn['depth'])
    assert kept['boxes']['data'].tolist() == drawn['boxes']['data'].tolist()
    assert 'crate' in str(drawn['boxes']['info'])  # the crate, left out of the physics, is seen and boxed


def _model_arrays(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    return {name: value for name in dir(model) if not name.startswith('_')
            and isinstance(value := getattr(model, name), np.ndarray)}


def test_a_gr1_compiles_without_reading_its_meshes_and_moves_the_same():
    # Its Inspire hands' fingertips have no inertial: MuJoCo read all 61 mesh files for the
    # physics compile (0.6 s, 211 MB kept in its asset cache) until they got explicit ones,
    # derived without a mesh; every array of the model and the motion are the same to the bit.
    import contextlib
    from unittest import mock

    from internutopia.core.backend.mujoco import visuals
    from internutopia_extension.configs.robots.gr1 import GR1RobotCfg, move_by_speed_cfg

    cache = mujoco.mj_getCache()
    runs = {}
    for explicit in (True, False):
        mujoco.mj_clearCache(cache)
        # (without them: compile_physics as it was before explicit_inertials)
        patch = contextlib.nullcontext() if explicit else mock.patch.object(visuals, 'explicit_inertials', side_effect=lambda spec: 0)
        with patch, Env(Config(env_num=1, metrics_save_path='none',
                               task_configs=[FiniteStepTaskCfg(max_steps=10 ** 6, robots=[GR1RobotCfg(controllers=[move_by_speed_cfg])])])) as env:
            env.reset()
            read = mujoco.mj_getCacheSize(cache)
            for _ in range(30):
                obs, *_ = env.step([{'gr1': {'move_by_speed': [0.5, 0.0, 0.0]}}])
            runs[explicit] = (read, _model_arrays(env.runner.world.pack(0).model), obs[0]['gr1']['position'])
    (read, model, position), (read_before, model_before, position_before) = runs[True], runs[False]
    assert read == 0 and read_before > 100e6  # no mesh decoded now; 211 MB before
    assert model.keys() == model_before.keys()
    for name, array in model.items():
        assert np.array_equal(array, model_before[name], equal_nan=True), name
    assert np.array_equal(position, position_before)


def test_a_walking_g1_moves_bit_for_bit_as_when_its_kept_spec_was_the_compiled_one():
    # G1 collides with 24 meshes, so its physics compile makes them (106 MB of vertices, faces,
    # hulls and trees in the compiled spec, for a 44 MB model). The spec kept for the drawn model
    # was a copy of the compiled one, which kept all that alive with the model; now a copy
    # compiles and the kept spec never does. The model, its drawn model and the motion are the same.
    import contextlib
    from unittest import mock

    from internutopia.core.backend.mujoco import visuals, world
    from internutopia_extension.configs.robots.g1 import G1RobotCfg
    from internutopia_extension.configs.robots.g1 import move_by_speed_cfg as g1_move_by_speed

    def as_before(spec: mujoco.MjSpec, keep_visuals: bool) -> mujoco.MjModel:
        assert not keep_visuals
        full = spec.copy()
        explicit_inertials(spec)
        spec.compiler.discardvisual = True
        model = spec.compile()
        visuals._kept_specs[model] = full
        return model

    runs = {}
    for before in (True, False):
        patch = mock.patch.object(world, 'compile_physics', as_before) if before else contextlib.nullcontext()
        robot = G1RobotCfg(controllers=[g1_move_by_speed])
        with patch, Env(Config(env_num=1, metrics_save_path='none', task_configs=[FiniteStepTaskCfg(max_steps=10 ** 6, robots=[robot])])) as env:
            env.reset()
            pack = env.runner.world.pack(0)
            for _ in range(150):
                env.step_arrays({'g1': {'move_by_speed': WALK[None]}})
            runs[before] = (_model_arrays(pack.model), _model_arrays(drawn_model(pack.model)), pack.batch.state.copy())
    (model, drawn, state), (model_before, drawn_before, state_before) = runs[False], runs[True]
    assert model['mesh_vertnum'].size == 24 and drawn['geom_type'].size > model['geom_type'].size  # (meshes in both)
    for now, then in ((model, model_before), (drawn, drawn_before)):
        assert now.keys() == then.keys()
        for name, array in now.items():
            assert np.array_equal(array, then[name], equal_nan=True), name
    assert np.array_equal(state, state_before)


def test_bodies_without_an_inertial_get_the_one_mujoco_derives_where_no_mesh_gives_it():
    def spec(tip_mesh: bool = False) -> mujoco.MjSpec:
        made = mujoco.MjSpec()
        made.add_mesh(name='tetra', uservert=[0, 0, 0, 0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1])
        hull = made.worldbody.add_body(name='hull', pos=[0, 0, 1], mass=2.0, inertia=[0.1, 0.2, 0.3], explicitinertial=True)
        hull.add_freejoint()
        hull.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname='tetra', contype=0, conaffinity=0)  # a look
        tip = hull.add_body(name='tip', pos=[0.2, 0, 0])
        tip.add_joint(name='hinge', axis=[0, 0, 1])
        tip.add_geom(size=[0.02, 0, 0], pos=[0.01, 0.02, 0])
        if tip_mesh:
            tip.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname='tetra')
        return made

    plain = spec()
    derived = plain.copy().compile()
    assert explicit_inertials(plain) == 1 and plain.body('tip').explicitinertial
    model = plain.compile()
    for field in ('body_mass', 'body_ipos', 'body_iquat', 'body_inertia', 'dof_M0'):
        assert np.array_equal(getattr(model, field), getattr(derived, field)), field
    # A body whose inertial comes from a mesh: the meshes are read anyway, nothing changes.
    meshy = spec(tip_mesh=True)
    assert explicit_inertials(meshy) == 0 and not meshy.body('tip').explicitinertial
    # An unnamed one (it could not be found in the copy's model): nothing changes.
    unnamed = spec()
    unnamed.body('tip').add_body(pos=[0.1, 0, 0]).add_geom(size=[0.01, 0, 0])
    assert explicit_inertials(unnamed) == 0 and not unnamed.body('tip').explicitinertial
    # A copy that cannot compile without its mesh geoms (a sensor names one): nothing changes.
    named = spec()
    named.body('hull').geoms[0].name = 'shell'
    named.add_sensor(type=mujoco.mjtSensor.mjSENS_FRAMEPOS, objtype=mujoco.mjtObj.mjOBJ_GEOM, objname='shell')
    assert explicit_inertials(named) == 0 and not named.body('tip').explicitinertial
