"""Installs with no compiler: every hard dependency ships wheels; what does not (meshoptimizer,
published as a source distribution only) is an extra, and everything works without it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip('tomli')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def project() -> dict:
    with open(os.path.join(ROOT, 'pyproject.toml'), 'rb') as stream:
        return tomllib.load(stream)['project']


def test_meshoptimizer_is_an_extra_not_a_hard_dependency():
    names = [requirement.split('>')[0].split('=')[0].split(';')[0].strip().lower() for requirement in project()['dependencies']]
    assert 'meshoptimizer' not in names
    assert any(r.startswith('meshoptimizer') for r in project()['optional-dependencies']['lod'])


def test_cameras_render_without_meshoptimizer():
    """With the library missing, an H1's camera still renders (full-detail meshes), with one warning that says why."""
    script = textwrap.dedent('''
        import sys, warnings
        sys.modules['meshoptimizer'] = None  # as on a machine where it is not installed
        from internutopia.core.config import Config, SimConfig
        from internutopia.core.vec_env import Env
        from internutopia_extension import import_extensions
        from internutopia_extension.configs.robots.h1 import H1RobotCfg, h1_tp_camera_cfg
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
        import_extensions()
        camera = h1_tp_camera_cfg.update(resolution=(64, 48), depth=False, enable=True)
        task = SingleInferenceTaskCfg(robots=[H1RobotCfg(sensors=[camera])])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            env = Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=2, metrics_save_path='none',
                             task_configs=[task, task]))
            obs, _ = env.reset()
            obs, *_ = env.step([None, None])
            env.close()
        image = obs[0]['h1']['sensors']['tp_camera']['rgba']
        lod = [w for w in caught if 'meshoptimizer' in str(w.message)]
        print(image.shape, int(image[..., :3].std() > 5), len(lod), str(lod[0].message) if lod else '')
    ''')
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=300,
                            env={**os.environ, 'MUJOCO_GL': os.environ.get('MUJOCO_GL', 'egl')}, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith('(48, 64, 4) 1 1 '), last  # an image with something drawn, one warning
    assert 'full detail' in last and 'meshoptimizer' in last
