"""The CPUs a process may use, not the machine's: the physics, camera and Ray defaults follow the
affinity mask (``taskset``, Slurm, ``docker --cpuset-cpus``) and the cgroup CPU quota
(``docker --cpus``, a Kubernetes limit). A made-up cgroup tree stands in for a container's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from internutopia.core.util import cgroups, cpus


def _tree(tmp_path, monkeypatch, version: str, quotas: dict[str, str]) -> None:
    """A cgroup tree with this process in ``/job/worker``; ``quotas``: folder -> its file's text."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    if version == 'v2':
        (tmp_path / 'proc_cgroup').write_text('0::/job/worker\n')
        (tmp_path / 'cgroup.controllers').write_text('cpu memory\n')
        base = tmp_path
    else:
        (tmp_path / 'proc_cgroup').write_text('4:memory:/\n3:cpu,cpuacct:/job/worker\n')
        base = tmp_path / 'cpu'
    (base / 'job' / 'worker').mkdir(parents=True)
    for folder, text in quotas.items():
        if version == 'v2':
            (base / folder / 'cpu.max').write_text(text + '\n')
        else:
            quota, period = text.split()
            (base / folder / 'cpu.cfs_quota_us').write_text(('-1' if quota == 'max' else quota) + '\n')
            (base / folder / 'cpu.cfs_period_us').write_text(period + '\n')
    monkeypatch.setattr(cgroups, 'CGROUP_ROOT', str(tmp_path))
    monkeypatch.setattr(cgroups, 'PROC_CGROUP', str(tmp_path / 'proc_cgroup'))


@pytest.mark.parametrize('version', ['v2', 'v1'])
def test_a_cgroup_cpu_quota_caps_the_usable_cpus(tmp_path, monkeypatch, version):
    monkeypatch.setattr(cpus, '_affinity_count', lambda: 64)  # (a big machine)
    _tree(tmp_path, monkeypatch, version, {'job': '150000 100000', 'job/worker': 'max 100000'})
    assert cpus.cgroup_cpu_quota() == pytest.approx(1.5)  # (the parent's quota binds the worker)
    assert cpus.usable_cpus() == 2  # (one and a half CPUs of time: two threads)
    _tree(tmp_path / 'tighter', monkeypatch, version, {'job': '400000 100000', 'job/worker': '50000 100000'})
    assert cpus.cgroup_cpu_quota() == pytest.approx(0.5) and cpus.usable_cpus() == 1
    _tree(tmp_path / 'none', monkeypatch, version, {'job': 'max 100000'})
    assert cpus.cgroup_cpu_quota() is None and cpus.usable_cpus() == 64


@pytest.mark.skipif(not hasattr(os, 'sched_setaffinity'), reason='sets the CPU affinity (Linux)')
def test_an_env_confined_to_one_cpu_steps_its_physics_on_one_thread():
    """Confined to one CPU (as ``taskset -c 0`` or a one-CPU Slurm job does) on a machine with
    more: the world's physics threads, the camera threads and the torch update threads are one
    each. Before, they were the machine's count, and a world of 64 carried H1s on 2 cores
    stepped 2.2 times slower with 32 threads and 3.2 times slower with 128 than with 2."""
    script = '''
import os
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from internutopia.core.config import Config
from internutopia.core.vec_env import Env
from internutopia.core.backend.mujoco.render.cameras import default_render_threads
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg
from internutopia_extension.robots.h1_locomotion.policy.torch_threads import default_update_threads

import_extensions()
config = Config(env_num=2, metrics_save_path='none', task_configs=[SingleInferenceTaskCfg(robots=[JetbotRobotCfg()])] * 2)
with Env(config) as env:
    obs, _ = env.reset()
    print('THREADS', env.runner.world.threads, default_render_threads(), default_update_threads(), os.cpu_count() > 1)
'''
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'THREADS 1 1 1' in done.stdout, done.stdout
