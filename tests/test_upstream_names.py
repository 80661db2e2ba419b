"""InternUtopia 2.2.1's public names, one by one: each exists here, or the docs say why not."""

from __future__ import annotations

import os
import re
import textwrap

import numpy as np
import pytest

from internutopia.compat import probe
from internutopia.compat.notes import ABSENT, status_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_upstream_name_exists_or_is_documented_as_absent():
    result = probe.probe()
    assert not result.absent_undocumented, [n.path for n in result.absent_undocumented]
    assert not result.documented_absent_but_present, [n.path for n in result.documented_absent_but_present]
    assert len(result.present) >= 581  # of 729; the absent ones are Isaac-only, teleoperation or robots without a model


def test_the_names_the_issue_lists_exist():
    for path in ['internutopia.core.robot.robot.BaseRobot', 'internutopia.core.robot.controller.BaseController',
                 'internutopia.core.sensor.sensor.BaseSensor', 'internutopia.core.task.metric.BaseMetric',
                 'internutopia.core.task.reward.BaseReward', 'internutopia.core.task.BaseTask',
                 'internutopia.core.robot.articulation_action.ArticulationAction',
                 'internutopia.core.task_config_manager.base.BaseTaskConfigManager',
                 'internutopia.core.runner.SimulatorRunner', 'internutopia.core.scene.scene.IScene',
                 'internutopia.core.config.DistributedConfig', 'internutopia.core.config.Simulator',
                 'internutopia.core.config.distribution.RayDistributionCfg',
                 'internutopia.core.vec_env.Env.get_observations', 'internutopia.core.vec_env.Env.get_dt',
                 'internutopia.core.vec_env.Env.warm_up', 'internutopia.core.vec_env.Env.is_render',
                 'internutopia.core.vec_env.Env.active_task_configs', 'internutopia.core.vec_env.Env.proc_num',
                 'internutopia.core.vec_env.Env.is_remote', 'internutopia.core.vec_env.Env.task_config_manager',
                 'internutopia.core.gym_env.Env.RESET_INFO_TASK_CONFIG', 'internutopia.core.gym_env.Env.runner',
                 'internutopia_extension.configs.robots.jetbot.camera_cfg',
                 'internutopia_extension.configs.metrics.traveled_distance_metric.TraveledDistanceMetricCfg.robot_name',
                 'internutopia_extension.configs.metrics.RecordingMetricCfg',
                 'internutopia_extension.configs.robots.h1.recover_cfg',
                 'internutopia_extension.configs.controllers.RecoverControllerCfg',
                 'internutopia_extension.configs.tasks.ManipulationTaskCfg',
                 'internutopia_extension.configs.controllers.InverseKinematicsControllerCfg',
                 'internutopia_extension.configs.controllers.GripperControllerCfg',
                 'internutopia_extension.configs.controllers.RMPFlowControllerCfg']:
        assert probe.resolve(path) is not probe._MISSING, path
        assert status_of(path)[0] != ABSENT, path


def test_resolve_tells_fields_members_and_missing_names_apart():
    assert probe.resolve('internutopia.core.config.task.TaskCfg.scene_root_path').default == '/scene'
    assert probe.resolve('internutopia.core.robot.robot.BaseRobot.articulation') == 'articulation'  # declared per instance
    assert probe.resolve('internutopia.core.no_such_module.Thing') is probe._MISSING
    assert probe.resolve('internutopia.core.vec_env.Env.no_such_member') is probe._MISSING


def test_extraction_reads_names_from_a_checkout(tmp_path):
    """The list is extracted from an upstream checkout: imports of its tests, config classes and fields."""
    (tmp_path / 'tests').mkdir()
    (tmp_path / 'tests' / 'demo.py').write_text('from internutopia.core.vec_env import Env\nimport internutopia.core.util\n')
    config = tmp_path / 'internutopia' / 'core' / 'config'
    config.mkdir(parents=True)
    (config / '__init__.py').write_text(textwrap.dedent('''
        class SimConfig(BaseModel):
            physics_dt: float = 1 / 60
        DEFAULT = SimConfig()
    '''))
    for module in ('vec_env', 'util/__init__'):
        path = tmp_path / 'internutopia' / 'core' / f'{module}.py'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('class Env:\n    def step(self, action):\n        self.count = 0\n' if module == 'vec_env' else '')
    names = {(n.kind, n.path) for n in probe.extract(tmp_path, member_sources={'internutopia/core/vec_env.py': ('Env',)})}
    assert ('module', 'internutopia.core.vec_env') in names and ('name', 'internutopia.core.vec_env.Env') in names
    assert ('field', 'internutopia.core.config.SimConfig.physics_dt') in names
    assert ('name', 'internutopia.core.config.DEFAULT') in names and ('module', 'internutopia.core.util') in names
    assert ('member', 'internutopia.core.vec_env.Env.step') in names


def test_the_contract_table_is_the_probes():
    with open(os.path.join(ROOT, 'docs', 'contract.md'), encoding='utf-8') as stream:
        text = stream.read()
    table = re.search(r'<!-- names-table:.*?-->\n(.*?)\n<!-- /names-table -->', text, flags=re.S)
    assert table, 'docs/contract.md lost its names table'
    assert table.group(1) == probe.markdown_table(), 'regenerate it: python -m internutopia.compat.probe --markdown'


def test_every_upstream_module_of_a_built_in_class_imports_with_its_classes():
    """InternNav and InternManip import built-in classes by upstream's module paths."""
    import importlib

    from internutopia.core.controller.base import BaseController
    from internutopia_extension import import_extensions

    import_extensions()
    modules = [n for n in probe.load_names() if n.kind == 'module' and n.path.startswith('internutopia_extension.')
               and n.path.split('.')[1] in ('controllers', 'tasks', 'metrics', 'robots', 'objects', 'sensors')]
    assert len(modules) >= 40
    for name in modules:
        if status_of(name.path)[0] == ABSENT:
            continue
        importlib.import_module(name.path)
    from internutopia_extension.controllers.dd_controller import DifferentialDriveController
    from internutopia_extension.robots.franka import Franka, FrankaRobot
    from internutopia_extension.tasks.manipulation_task import ManipulationTask  # noqa: F401

    assert BaseController.registry.get('DifferentialDriveController') is DifferentialDriveController
    with pytest.raises(TypeError, match='FrankaRobot'):
        Franka(prim_path='/World/franka', usd_path='franka.usd')  # Isaac's articulation: it says what to use
    assert FrankaRobot.upstream_methods is not None
    for oracle in ('MoveToPointOracleController', 'RotateOracleController'):
        assert oracle in BaseController.registry


def test_internutopias_rotation_helpers_and_data_hub():
    """Extensions (InternNav's controllers, InternManip's tasks) import these from upstream's paths."""
    import torch

    from internutopia.core.datahub import DataHub
    from internutopia.core.util.math import (
        quat_rotate_inverse,
        quaternion_conjugate,
        quaternion_multiply,
        quaternion_to_gravity_component,
    )

    yaw = 0.7
    q = np.array([[np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]])
    v = np.array([[1.0, 2.0, 0.5]])
    expected = [[np.cos(yaw) * 1 + np.sin(yaw) * 2, -np.sin(yaw) * 1 + np.cos(yaw) * 2, 0.5]]
    np.testing.assert_allclose(quat_rotate_inverse(q, v), expected, atol=1e-12)
    # torch in, torch out in v's dtype (InternNav rotates a float32 gravity vector by a float64 pose)
    out = quat_rotate_inverse(torch.tensor(q, dtype=torch.float64), torch.tensor(v, dtype=torch.float32))
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-6)
    tilted = quaternion_multiply([np.cos(0.2), np.sin(0.2), 0.0, 0.0], quaternion_conjugate([1.0, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(quaternion_to_gravity_component(tilted), [0.0, np.sin(0.4), -np.cos(0.4)], atol=1e-12)

    DataHub.clear()
    assert DataHub.get_episode_finished('episode_3') is False
    DataHub.set_episode_finished('episode_3')
    DataHub.send_chat_control('agent', 'picked the cube', task_name='episode_3')
    assert DataHub.get_episode_finished('episode_3') and DataHub.get_chat_control('episode_3', 0)[0]['message'] == 'picked the cube'
    DataHub.clear()
    assert not DataHub.get_episode_finished('episode_3')
