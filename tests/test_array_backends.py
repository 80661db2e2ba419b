"""The array API and the Gymnasium vector env hand results over as torch or Warp arrays when asked
(``array_backend=``), and ``Env.state_arrays`` views the physics state where it lives, no copy made.

On the MuJoCo backend (these tests) everything lives on the host: torch tensors and Warp arrays
share the numpy arrays' memory. The Warp backend's device views are tested in
``tests/test_warp_arrays.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip('torch', reason="torch comes with the 'train' extra")

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.gym_vector import FlatEnv, VectorEnv  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402

SPEEDS = np.array([[0.4, 0.8], [0.3, -0.5]])


def config(env_num: int = 2) -> Config:
    task = FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg()])
    return Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, env_offset_size=5.0,
                  task_configs=[task] * env_num, metrics_save_path='none')


def leaves(tree, path=''):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from leaves(value, f'{path}{key}/')
        else:
            yield f'{path}{key}', value


def steps(array_backend: str, count: int = 3):
    with Env(config()) as env:
        env.reset()
        for _ in range(count):
            out = env.step_arrays({'jetbot': {'move_by_speed': SPEEDS}}, array_backend=array_backend)
        return out


@pytest.mark.parametrize('array_backend', ['torch', 'warp'])
def test_torch_and_warp_results_equal_the_numpy_ones_on_the_cpu(array_backend):
    library = torch if array_backend == 'torch' else pytest.importorskip('warp', reason="Warp comes with the 'warp' extra")
    kind = torch.Tensor if array_backend == 'torch' else library.array
    expected, out = steps('numpy'), steps(array_backend)
    for path, value in leaves(expected.obs['jetbot']):
        got = dict(leaves(out.obs['jetbot']))[path]
        assert isinstance(got, kind) and str(got.device) == 'cpu', path
        np.testing.assert_array_equal(got.numpy(), value, err_msg=path)
    for name in ('reward', 'terminated', 'truncated', 'active'):
        got = getattr(out, name)
        assert isinstance(got, kind)
        np.testing.assert_array_equal(got.numpy(), getattr(expected, name), err_msg=name)
    assert out.metrics == expected.metrics and out.diverged == expected.diverged
    assert out.terminated.dtype == library.bool and out.obs['jetbot']['position'].dtype == library.float64


def test_a_bad_array_backend_is_refused_naming_the_valid_ones_before_anything_moves():
    with Env(config()) as env:
        env.reset()
        before = env.runner.world.pack(0).data.qpos.copy()
        with pytest.raises(ValueError, match=r"array_backend must be one of \['numpy', 'torch', 'warp'\]; got 'jax'"):
            env.step_arrays({'jetbot': {'move_by_speed': SPEEDS}}, array_backend='jax')
        np.testing.assert_array_equal(env.runner.world.pack(0).data.qpos, before)
        with pytest.raises(ValueError, match=r"state fields \['qacc'\] are not served; valid: \['qpos'"):
            env.state_arrays(['qpos', 'qacc'])


def test_state_arrays_view_the_host_state_of_the_mujoco_backend_without_a_copy():
    with Env(config()) as env:
        with pytest.raises(RuntimeError, match=r'call reset\(\) before state_arrays\(\)'):
            env.state_arrays()
        env.reset()
        (block,) = env.state_arrays(('qpos', 'qvel'))
        pack = env.runner.world.pack(0)
        assert block.key == pack.key and block.slots.tolist() == [0, 1] and env.array_device == 'cpu'
        qpos = block.arrays['qpos']
        assert isinstance(qpos, torch.Tensor) and qpos.dtype == torch.float64 and qpos.device.type == 'cpu'
        assert qpos.data_ptr() == pack.data.qpos.ctypes.data  # the same memory
        env.step_arrays({'jetbot': {'move_by_speed': SPEEDS}})
        env.step_arrays({'jetbot': {'move_by_speed': SPEEDS}})
        np.testing.assert_array_equal(qpos.numpy(), pack.data.qpos)  # a live view: it follows the steps
        assert not np.allclose(qpos.numpy()[:, :3], 0.0)



def test_warp_state_arrays_on_the_mujoco_backend_view_the_host_state():
    pytest.importorskip('warp', reason="Warp comes with the 'warp' extra")
    with Env(config()) as env:
        env.reset()
        (block,) = env.state_arrays(('qvel', 'ctrl'), array_backend='warp')
        data = env.runner.world.pack(0).data
        assert block.arrays['qvel'].ptr == data.qvel.ctypes.data and block.arrays['ctrl'].ptr == data.ctrl.ctypes.data
        np.testing.assert_array_equal(block.arrays['qvel'].numpy(), data.qvel)


def test_the_vector_env_returns_torch_tensors_and_takes_them_as_actions():
    actions = SPEEDS.astype(np.float32)
    expected_env = VectorEnv(config(), autoreset_mode='SameStep')
    env = VectorEnv(config(), autoreset_mode='SameStep', array_backend='torch')
    expected, _ = expected_env.reset(seed=0)
    obs, info = env.reset(seed=0)
    assert isinstance(obs, torch.Tensor) and env.array_device == 'cpu'
    np.testing.assert_array_equal(obs.numpy(), expected)
    for _ in range(3):
        expected, *expected_rest, _ = expected_env.step(actions)
        obs, reward, terminated, truncated, info = env.step(torch.from_numpy(actions))
    assert all(isinstance(x, torch.Tensor) for x in (obs, reward, terminated, truncated))
    np.testing.assert_array_equal(obs.numpy(), expected)
    for got, want in zip((reward, terminated, truncated), expected_rest, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError, match=r"array_backend must be one of \['numpy', 'torch', 'warp'\]; got 'cupy'"):
        VectorEnv(config(), array_backend='cupy')
    with pytest.raises(ValueError, match=r"FlatEnv returns numpy arrays .* use VectorEnv\(array_backend=...\)"):
        FlatEnv(config(1), array_backend='torch')


def test_the_example_in_docs_backend_md_runs_and_prints_what_the_page_says(capsys):
    import os
    import re

    page = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'docs', 'backend.md')
    with open(page, encoding='utf-8') as stream:
        text = stream.read()
    section = text[text.index('## Arrays on the device'):]
    block = re.search(r'^```python\n(.*?)^```', section, flags=re.S | re.M).group(1)
    exec(compile(block, 'docs/backend.md (arrays example)', 'exec'), {'__name__': 'docs_backend_arrays'})  # noqa: S102
    printed = re.search(r'^prints `(.*)`\.$', section, flags=re.M).group(1)
    assert capsys.readouterr().out.strip() == printed


def test_without_the_library_the_error_names_what_to_install(monkeypatch):
    import sys

    from internutopia.core.backend.arrays import check_array_backend

    monkeypatch.setitem(sys.modules, 'warp', None)  # as if it were not installed
    with pytest.raises(RuntimeError, match=r"array_backend='warp' needs warp, which is not installed .*pip install 'internutopia\[warp\]'"):
        check_array_backend('warp')
