"""An extension package written InternNav's way (tests/internnav_style) runs end to end on H1 with a camera."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tests.internnav_style  # noqa: F401  (registers the package's classes)
from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import move_by_speed_cfg
from internutopia_extension.configs.sensors import RepCameraCfg
from tests.internnav_style.configs import DiscreteMoveCfg, NavH1Cfg, NavTaskCfg, PathMetricCfg
from tests.internnav_style.controllers import FORWARD, LEFT

CAMERA = RepCameraCfg(name='camera', prim_path='logo_link/Camera', resolution=(64, 48), depth=True)


def nav_config(tmp_path, max_steps=200):
    h1 = NavH1Cfg(position=(0.0, 0.0, 1.05), sensors=[CAMERA],
                  controllers=[move_by_speed_cfg, DiscreteMoveCfg(name='discrete', sub_controllers=[move_by_speed_cfg])])
    task = NavTaskCfg(goal=(0.75, 0.0), max_steps=max_steps, robots=[h1], metrics=[PathMetricCfg()])
    return Config(simulator=SimConfig(physics_dt=1 / 60), env_num=2, env_offset_size=10,
                  metrics_save_path=str(tmp_path / 'results.jsonl'), task_configs=[task, task])


def test_internnav_style_package_on_h1_with_a_camera(tmp_path):
    with Env(nav_config(tmp_path, max_steps=240)) as env:
        obs, _ = env.reset()
        first_image = np.array(obs[0]['h1']['sensors']['camera']['rgba'])
        steps = 0
        ended = [None, None]
        while not all(e is not None for e in ended):
            obs, reward, terminated, truncated, info = env.step([{'h1': {'discrete': [FORWARD]}}, {'h1': {'discrete': [LEFT]}}])
            steps += 1
            for slot in (0, 1):
                if ended[slot] is None and terminated[slot]:
                    ended[slot] = steps
            if steps == 20:
                robot = obs[0]['h1']
                # The task's GPS entry, the robot subclass's link lookups, the composite controller's obs.
                np.testing.assert_allclose(robot['globalgps'], robot['position'][:2])
                assert 0.0 < robot['ankle_height'] < 0.2 < robot['torso_height']
                assert robot['controllers']['discrete']['last_action'] == FORWARD
                image = np.array(robot['sensors']['camera']['rgba'])
                assert image.shape == (48, 64, 4) and image[..., :3].std() > 5  # the head camera sees a scene
                assert np.abs(image.astype(int) - first_image.astype(int)).mean() > 0.5  # and it moved
                turned = obs[1]['h1']
                assert np.linalg.norm(turned['globalgps']) < 0.05  # turning in place
            assert steps < 300
        assert ended[0] < ended[1] == 240  # slot 0 arrived (H1 walks it in about 2.5 s), slot 1 ran out of steps
    records = [json.loads(line) for line in (tmp_path / 'results.jsonl').read_text().splitlines()]
    assert len(records) == 2
    by_slot = sorted(records, key=lambda r: json.dumps(r, sort_keys=True))
    metrics = [r['metrics']['path_metric'] if 'metrics' in r else r['path_metric'] for r in by_slot]
    arrived = min(metrics, key=lambda m: m['final_distance'])
    turned = max(metrics, key=lambda m: m['final_distance'])
    assert arrived['final_distance'] < 0.27 and 0.45 < arrived['path_length'] < 0.8
    # Fed every step but the one its task ended on (as InternUtopia does): the last distance it saw is
    # one step short of the arrival radius.
    assert arrived['updates'] == ended[0] - 1
    # (turning in place on its own legs, the pelvis sways a few centimetres with every step)
    assert turned['updates'] == 239 and turned['path_length'] < 0.5


RAY_DRIVER = '''
import json, sys
import numpy as np
import pytest
import tests.internnav_style  # registers the package's classes (the workers import it too)
from internutopia.core.config import Config, SimConfig
from internutopia.core.distribution import RayDistributionCfg
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import move_by_speed_cfg
from internutopia_extension.configs.sensors import RepCameraCfg
from tests.internnav_style.configs import DiscreteMoveCfg, NavH1Cfg, NavTaskCfg, PathMetricCfg


class EvalTaskCfg(NavTaskCfg):
    """Defined in the driver script, as InternNav's evaluation configs are: reaches the workers by value."""
    split: str = 'val_seen'


camera = RepCameraCfg(name='camera', prim_path='logo_link/Camera', resolution=(32, 24), depth=True)
h1 = NavH1Cfg(position=(0.0, 0.0, 1.05), sensors=[camera],
              controllers=[move_by_speed_cfg, DiscreteMoveCfg(name='discrete', sub_controllers=[move_by_speed_cfg])])
# InternNav passes its run settings as task config keys (kept as extras, as upstream keeps them).
tasks = [EvalTaskCfg(goal=(0.5, 0.0), max_steps=180, robots=[h1], metrics=[PathMetricCfg()], env_num=1, offset_size=10,
                     proc_num=2) for _ in range(2)]
config = Config(simulator=SimConfig(physics_dt=1 / 60), env_num=1, metrics_save_path=sys.argv[1], task_configs=tasks)
env = Env(config.distribute(RayDistributionCfg(proc_num=2)))
try:
    images = []
    obs, info = env.reset()
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step([{'h1': {'discrete': [1]}}] * env.env_num)
        images += [float(np.asarray(o['h1']['sensors']['camera']['rgba'])[..., :3].std()) for o in obs if o is not None]
        if all(terminated):
            done = [i for i, t in enumerate(terminated) if t]
            if all(o is None for o in obs):
                break
            env.reset(done)
    print(json.dumps({'min_image_std': min(images)}))
finally:
    env.close()
'''


@pytest.mark.xdist_group('ray')  # one Ray cluster at a time (see conftest.py)
@pytest.mark.slow
def test_the_package_with_a_driver_defined_task_config_runs_on_ray(tmp_path):
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = tmp_path / 'driver.py'
    script.write_text(RAY_DRIVER)
    results = tmp_path / 'results.jsonl'
    run = subprocess.run([sys.executable, str(script), str(results)], capture_output=True, text=True, timeout=400,
                         cwd=tmp_path, env={**os.environ, 'PYTHONPATH': root})
    assert run.returncode == 0, run.stderr[-3000:]
    # (its JSON line; the env's close prints the run summary after it, as one process's does)
    (line,) = [line for line in run.stdout.splitlines() if line.startswith('{"min_image_std"')]
    assert json.loads(line)['min_image_std'] > 5  # the head cameras saw a scene
    assert '[internutopia] run summary: ' in run.stdout
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        metric = record['metrics']['path_metric']
        assert metric['final_distance'] < 0.27 and metric['path_length'] > 0.2  # each walked to its goal on a worker
