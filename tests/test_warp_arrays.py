"""On the Warp backend (Warp's CPU device here; a GPU with ``INTERNUTOPIA_TEST_WARP_DEVICE=cuda:0``)
``Env.state_arrays`` hands out the device's own data:
torch tensors are ``warp.to_torch`` views sharing its memory, Warp arrays are the data itself; and
``step_arrays(array_backend=...)`` results equal the numpy ones, on the backend's device.

The one structure is ``tests/test_warp_backend.py``'s Jetbot with a cube, whose kernels Warp's
cache already holds there.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('mujoco_warp', reason="the warp extra is not installed (pip install 'internutopia[warp]'; Python >= 3.11)")
torch = pytest.importorskip('torch', reason="torch comes with the 'train' extra")

from internutopia.core.backend.arrays import DEVICE_STATE_FIELDS  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from tests.test_array_backends import leaves  # noqa: E402
from tests.test_warp_backend import WARP_DEVICE, assert_same_run, jetbot_cube_task, warp_config  # noqa: E402

pytestmark = pytest.mark.slow
SPEEDS = np.array([[0.4, 0.8], [0.3, -0.5]])


def test_state_arrays_are_views_of_the_device_data_not_copies():
    import warp

    with Env(warp_config([jetbot_cube_task(), jetbot_cube_task()], env_num=2)) as env:
        env.reset()
        pack = env.runner.world.pack(0)
        (block,) = env.state_arrays(('qpos', 'qvel', 'ctrl'))
        assert env.array_device == WARP_DEVICE and block.slots.tolist() == [0, 1]
        qpos = block.arrays['qpos']
        assert isinstance(qpos, torch.Tensor) and qpos.dtype == torch.float32 and qpos.device == torch.device(WARP_DEVICE)
        assert qpos.data_ptr() == pack.wdata.qpos.ptr and qpos.shape == (2, pack.lookup.nq)  # the device's memory
        before = qpos.cpu().numpy().copy()
        for _ in range(5):
            env.step_arrays({'jetbot': {'move_by_speed': SPEEDS}})
        # The same tensor now holds the state after the steps: it is the device data, which the host copy follows.
        np.testing.assert_allclose(qpos.cpu().numpy(), pack.data.qpos, rtol=1e-6, atol=1e-7)
        assert np.abs(qpos.cpu().numpy() - before).max(axis=1).min() > 1e-4
        # Every served field, with the host copy's shape (empty ones too: this scene has no mocap bodies).
        (every,) = env.state_arrays(DEVICE_STATE_FIELDS)
        assert {name: tuple(array.shape) for name, array in every.arrays.items()} == {
            name: getattr(pack.data, name).shape for name in DEVICE_STATE_FIELDS}
        assert all(array.data_ptr() == getattr(pack.wdata, name).ptr for name, array in every.arrays.items() if array.numel())
        (warp_block,) = env.state_arrays(('qvel',), array_backend='warp')
        assert warp_block.arrays['qvel'] is pack.wdata.qvel and isinstance(warp_block.arrays['qvel'], warp.array)
        (host_block,) = env.state_arrays(('qpos',), array_backend='numpy')
        assert host_block.arrays['qpos'] is pack.data.qpos  # 'numpy': the float64 host copy
        # A reset of slot 0 is on the device by the time the views are taken: its row is the rest state, slot 1's untouched.
        moved = qpos.cpu().numpy()[1].copy()
        env.reset([0])
        (block,) = env.state_arrays(('qpos',))
        np.testing.assert_allclose(block.arrays['qpos'].cpu().numpy()[0], pack.data.qpos[0], atol=1e-6)
        np.testing.assert_allclose(block.arrays['qpos'].cpu().numpy()[0, :3], [0.0, 0.0, 0.0], atol=0.05)
        np.testing.assert_array_equal(block.arrays['qpos'].cpu().numpy()[1], moved)


def test_step_results_as_torch_equal_the_numpy_ones_on_the_warp_backend():
    results = {}
    for array_backend in ('numpy', 'torch'):
        with Env(warp_config([jetbot_cube_task(), jetbot_cube_task()], env_num=2)) as env:
            env.reset()
            for _ in range(3):
                out = env.step_arrays({'jetbot': {'move_by_speed': SPEEDS}}, array_backend=array_backend)
            results[array_backend] = out
    expected, got = results['numpy'], results['torch']
    position = got.obs['jetbot']['position']
    assert isinstance(position, torch.Tensor) and position.device == torch.device(WARP_DEVICE) and isinstance(got.reward, torch.Tensor)
    observed = dict(leaves(got.obs))
    for path, value in leaves(expected.obs):
        assert_same_run(observed[path].cpu().numpy(), value, err_msg=path)
    for name in ('reward', 'terminated', 'truncated', 'active'):
        tensor = getattr(got, name)
        assert tensor.device == torch.device(WARP_DEVICE)
        np.testing.assert_array_equal(tensor.cpu().numpy(), getattr(expected, name), err_msg=name)

