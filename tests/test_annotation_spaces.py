"""Camera annotations (segmentation, boxes, labels, ``camera_params``) through the Gymnasium adapters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from internutopia.core.config import Config, SimConfig
from internutopia.core.gym_env import Env
from internutopia.core.gym_vector import VectorEnv
from internutopia.core.gym_vector.spaces import LabelTable, TableRows, space_from_value
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

ANNOTATED = jetbot_camera_cfg.update(resolution=(32, 24), depth=True, landmarks=True, semantic_segmentation=True,
                                     instance_segmentation=True, camera_params=True)
SEGMENT = 'robot.sensors.camera.semantic_segmentation'


def config(camera, env_num=1) -> Config:
    task = FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg(sensors=[camera])])
    return Config(simulator=SimConfig(physics_dt=1 / 240), metrics_save_path='none', env_num=env_num,
                  task_configs=[task])


def test_dict_env_observation_space_holds_every_annotation():
    env = Env(config(ANNOTATED), endless=True)
    try:
        camera = env.observation_space['sensors']['camera']
        for name in ('semantic_segmentation', 'instance_segmentation'):
            image = camera[name]['data']
            assert isinstance(image, spaces.Box) and image.shape == (24, 32) and image.dtype == np.int32
            assert image.low.min() == 0
            assert camera[name]['info'] == LabelTable(dict)
        assert isinstance(camera['bounding_box_2d_tight']['data'], TableRows)
        assert camera['landmarks'] == LabelTable(list)
        assert camera['camera_params']['cameraModel'] == LabelTable(str)
        obs, _ = env.reset()
        assert env.observation_space.contains(obs)
        obs, *_ = env.step({})
        assert env.observation_space.contains(obs)
        reading = obs['sensors']['camera']
        assert reading['landmarks'] == ['floor'] and len(reading['bounding_box_2d_tight']['data']) == 1
        assert set(np.unique(reading['semantic_segmentation']['data']).tolist()) <= {0, 1, 2, 3}
    finally:
        env.close()


def test_dict_env_with_segmentation_passes_check_env():
    # (Boxes are left out: Gymnasium's determinism check compares arrays with np.allclose,
    # which cannot compare the record arrays of bounding_box_2d_tight.)
    env = Env(config(ANNOTATED.update(landmarks=False)), endless=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            check_env(env)
        assert not [w for w in caught if 'infinity' not in str(w.message) and 'symmetric' not in str(w.message)
                    and 'render modes' not in str(w.message)]
    finally:
        env.close()


def test_vector_env_observes_segmentation_images_and_refuses_tables():
    envs = VectorEnv(config(ANNOTATED, env_num=2), obs_mode='dict',
                     obs_keys=[SEGMENT, 'robot.sensors.camera.instance_segmentation.data', 'robot.position'])
    try:
        space = envs.single_observation_space
        for key in (SEGMENT, 'robot.sensors.camera.instance_segmentation.data'):
            assert space[key].shape == (24, 32) and space[key].dtype == np.int32 and space[key].low.min() == 0
        obs, _ = envs.reset(seed=0)
        assert envs.observation_space.contains(obs)
        slots = envs.vec_env.get_observations()
        for row, slot in enumerate(slots):
            reading = slot['jetbot']['sensors']['camera']
            np.testing.assert_array_equal(obs[SEGMENT][row], reading['semantic_segmentation']['data'])
        assert (obs[SEGMENT] > 0).any()  # the floor is in view
        flat = VectorEnv(config(ANNOTATED, env_num=1), obs_keys=[SEGMENT])
        try:
            assert flat.single_observation_space.shape == (24 * 32,)
            values, _ = flat.reset(seed=0)
            assert set(np.unique(values).tolist()) <= {0.0, 1.0, 2.0, 3.0}
        finally:
            flat.close()
        from internutopia.core.gym_vector import ObsLayout

        for key in ('bounding_box_2d_tight', 'bounding_box_2d_tight.data', 'landmarks', 'semantic_segmentation.info',
                    'camera_params.cameraModel'):
            with pytest.raises(ValueError, match='no Box can hold'):
                ObsLayout(slots[0], 'jetbot', [f'robot.sensors.camera.{key}'])
    finally:
        envs.close()


def test_table_spaces_accept_their_kind_only():
    rows = np.zeros(3, dtype=[('semanticId', '<u4'), ('x_min', '<i4')])
    table = space_from_value({'data': rows, 'info': {'idToLabels': {'0': {'class': 'BACKGROUND'}}, 'bboxIds': np.arange(3)}})
    assert table.contains({'data': rows[:1], 'info': {'idToLabels': {}, 'primPaths': ['a']}})
    assert not table.contains({'data': np.zeros(3, np.int32), 'info': {}})
    assert not table.contains({'data': rows, 'info': ['not', 'a', 'dict']})
    assert table.sample()['data'].shape == (0,)
    assert LabelTable(list).contains(['crate', 'floor']) and not LabelTable(list).contains('crate')
    assert LabelTable(str).contains('pinhole') and not LabelTable(dict).contains({1: 'keys must be str'})
    with pytest.raises(ValueError, match='record dtype'):
        TableRows(np.dtype(np.int32))
