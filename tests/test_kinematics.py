"""Serial-chain kinematics: the folded table and the compiled forward kinematics against the numpy
reference and MuJoCo, on a chain with every case the fold handles (tilted hinge axes, anchors off
the body origin, joint references, a slide, a body without a joint, a link turned about x between
two z hinges, a rotated end site)."""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np
import pytest

from internutopia.core.backend.mujoco import MujocoLookup
from internutopia_extension.controllers import kinematics
from internutopia_extension.controllers.kinematics import SerialChain, fk, fk_frames, forward_kinematics, pack_base, quat_to_mat

CHAIN_XML = """
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0.1 0 0.2" quat="0.9 0.1 0.2 0.3">
      <geom size="0.05"/>
      <body name="a" pos="0 0 0.3" quat="0.7 0.7 0 0">
        <joint name="j1" type="hinge" axis="0.3 -0.5 0.8" pos="0.02 0.01 -0.03" ref="0.2"/>
        <geom size="0.05"/>
        <body name="fixed" pos="0.1 0.05 0" euler="0.3 0.2 0.1">
          <geom size="0.05"/>
          <body name="b" pos="0.2 0 0">
            <joint name="s1" type="slide" axis="1 1 0" pos="0.1 0 0" ref="0.05"/>
            <geom size="0.05"/>
            <body name="c" pos="0 0.25 0" quat="0 0 0 1">
              <joint name="j2" type="hinge" axis="0 0 -1"/>
              <geom size="0.05"/>
              <body name="d" pos="0.1 0 0.1">
                <joint name="j3" type="hinge" axis="1 0 0" pos="0 0.05 0"/>
                <geom size="0.05"/>
                <body name="e" pos="0 0.1 0.05">
                  <joint name="j4" type="hinge" axis="0 0 1" pos="0 0.02 0"/>
                  <geom size="0.05"/>
                  <body name="f" pos="0.1 0 0.05" quat="0.8 0.6 0 0">
                    <joint name="j5" type="hinge" axis="0 0 1" pos="0.01 0 0"/>
                    <geom size="0.05"/>
                    <site name="tip" pos="0.05 -0.02 0.1" euler="0.4 -0.3 1.2"/>
                  </body>
                </body>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope='module')
def model():
    return mujoco.MjModel.from_xml_string(CHAIN_XML)


@pytest.fixture(scope='module')
def chain(model):
    return SerialChain.from_model(MujocoLookup(model), 'base', 'tip')


def numpy_only(monkeypatch):
    """Make ``fk_frames`` take its numpy path (as without numba or with ``INTERNUTOPIA_JIT=0``)."""
    monkeypatch.setattr(kinematics, '_fk_kernel', SimpleNamespace(compiled_or=lambda fallback: fallback))


def random_q(chain: SerialChain, rows: int, seed: int) -> np.ndarray:
    # Beyond the (unlimited) ranges too: hinges through several turns, slides both ways.
    return np.random.default_rng(seed).uniform(-4.0, 4.0, size=(rows, chain.size))


def test_chain_covers_the_cases_the_fold_handles(chain):
    hinge, slide = kinematics.HINGE, kinematics.SLIDE
    assert chain.joint_type.tolist() == [hinge, slide, hinge, hinge, hinge, hinge]
    assert -1 in chain.body_joint  # a body without a joint
    assert chain.fk_table.shape == (chain.size + 1, 16)
    np.testing.assert_allclose(chain.fk_table[:-1, 13], [0.2, 0.05, 0.0, 0.0, 0.0, 0.0])  # the joints' references
    np.testing.assert_allclose(chain.fk_table[:-1, 12], [0, 1, 0, 0, 0, 0])  # hinge, slide, hinges
    # The link turned about x (between the two z hinges) takes the kernel's short product; the rest the general one.
    assert chain.fk_table[:, 15].tolist() == [0, 0, 0, 0, 0, 1, 0]


def test_numpy_reference_matches_mujoco(model, chain):
    data = mujoco.MjData(model)
    q = random_q(chain, 5, 0)
    position, rotation = forward_kinematics(chain, q)
    base, site = model.body('base').id, model.site('tip').id
    for row in range(len(q)):
        data.qpos[chain.qposadr] = q[row]
        mujoco.mj_kinematics(model, data)
        base_rot = data.xmat[base].reshape(3, 3)
        np.testing.assert_allclose(base_rot @ position[row] + data.xpos[base], data.site_xpos[site], atol=1e-12)
        np.testing.assert_allclose(base_rot @ rotation[row], data.site_xmat[site].reshape(3, 3), atol=1e-12)


@pytest.mark.parametrize('path', ['compiled', 'numpy'])
def test_fk_frames_match_the_reference_on_rows_subsets(chain, monkeypatch, path):
    """Rows picked from a wider joint array (columns out of order) and base poses picked by slot
    (a subset, out of order, one slot twice), against the numpy reference carried by each base."""
    if path == 'numpy':
        numpy_only(monkeypatch)
    elif not kinematics._fk_kernel.available:
        pytest.skip('numba is not available: only the numpy forward kinematics runs here')
    rng = np.random.default_rng(1)
    env_num, width = 6, chain.size + 3
    columns = np.array([4, 0, 6, 2, 8, 1], dtype=np.intp)
    slots = np.array([5, 0, 3, 3, 1], dtype=np.intp)
    q = random_q(chain, len(slots), 2)
    joints = rng.normal(size=(len(slots), width))
    joints[:, columns] = q
    base_quat = rng.normal(size=(env_num, 4))
    base_pos, base_rot = rng.normal(size=(env_num, 3)), quat_to_mat(base_quat)
    out = fk_frames(chain, joints, columns, pack_base(base_pos, base_rot), slots)
    assert out.shape == (len(slots), 16)
    position, rotation = forward_kinematics(chain, q)
    expected_rot = base_rot[slots] @ rotation
    np.testing.assert_allclose(out[:, :3], base_pos[slots] + np.einsum('kij,kj->ki', base_rot[slots], position), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[:, 7:].reshape(-1, 3, 3), expected_rot, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[:, 3:7], kinematics.mat_to_quat(expected_rot), rtol=0, atol=1e-12)
    assert np.all(out[:, 3] >= 0)
    # The rows alone: the first slot's row is the same whatever the other rows are.
    alone = fk_frames(chain, joints[:1].copy(), columns, pack_base(base_pos, base_rot), slots[:1].copy())
    np.testing.assert_array_equal(alone, out[:1])


def test_fk_without_a_base_is_the_base_frame(chain):
    q = random_q(chain, 4, 3)
    position, quat, rotation = fk(chain, q, rotation=True)
    reference_pos, reference_rot = forward_kinematics(chain, q)
    np.testing.assert_allclose(position, reference_pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rotation, reference_rot, rtol=0, atol=1e-12)
    np.testing.assert_allclose(quat_to_mat(quat), reference_rot, rtol=0, atol=1e-12)


def test_fk_kernel_as_plain_python_matches_the_reference(chain):
    """The kernel's source itself (run by Python, as numba would run it compiled), so its math is
    checked also where numba is missing."""
    from internutopia_extension.controllers.kinematics_kernel import _fk_rows

    q = random_q(chain, 3, 4)
    base = pack_base(np.zeros((3, 3)), np.broadcast_to(np.eye(3), (3, 3, 3)))
    out = np.empty((3, 16))
    _fk_rows(chain.fk_table, np.arange(chain.size), q, np.arange(3), base, out)
    position, rotation = forward_kinematics(chain, q)
    np.testing.assert_allclose(out[:, :3], position, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[:, 7:].reshape(-1, 3, 3), rotation, rtol=0, atol=1e-12)


def test_a_chain_with_no_joints_is_its_constant_transform(model):
    chain = SerialChain.from_model(MujocoLookup(model), 'c', 'c')  # a body is its own end frame: no bodies between
    out = fk_frames(chain, np.zeros((2, 1)), np.zeros(0, dtype=np.intp), pack_base(np.ones((2, 3)), np.broadcast_to(np.eye(3), (2, 3, 3))),
                    np.arange(2, dtype=np.intp))
    np.testing.assert_allclose(out[:, :3], 1.0)
    np.testing.assert_allclose(out[:, 3:7], [[1.0, 0.0, 0.0, 0.0]] * 2)
