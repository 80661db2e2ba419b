"""Sizing MuJoCo Warp's contact and constraint buffers from the scene, and naming overflows.

MuJoCo Warp allocates its contacts (``nconmax`` per world, pooled over the worlds) and its
constraint rows (``njmax`` per world) up front; a step that needs more drops what does not fit
and sets a bit in ``Data.overflow``. Its default sizes are a guess from ``nv`` alone, too small for
a robot standing among objects. Here they come from what can collide: every geom of a moving body
that collides, a contact pair's worst case of rows, and what the rest pose already touches.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

__all__ = ['BUFFER_OVERFLOWS', 'Buffers', 'buffer_overflow_mask', 'overflow_names', 'size_buffers']

#: Overflow bits of MuJoCo Warp's ``OverflowType`` that mean a buffer was too small (the
#: solver's iteration limits, bits 9 and 10, are not overflows of a buffer), with the buffer each names.
BUFFER_OVERFLOWS = {1 << 0: 'constraint rows (njmax)', 1 << 1: 'constraint Jacobian non-zeros (njmax)',
                    1 << 2: 'broadphase pairs (nconmax)', 1 << 3: 'contacts (nconmax)', 1 << 4: 'convex contacts (nconmax)',
                    1 << 5: 'height-field contacts', 1 << 6: 'contact sensor matches', 1 << 7: 'active dofs',
                    1 << 8: 'EPA horizon', 1 << 11: 'tactile pairs'}
_BUFFER_MASK = sum(BUFFER_OVERFLOWS)
#: Contacts allowed per colliding geom of a moving body (a box on a plane makes 4, a box on a box up to 8).
_CONTACTS_PER_GEOM = 6


@dataclass(frozen=True)
class Buffers:
    """Per-world capacities of one pack's MuJoCo Warp data."""

    #: Contacts per world (MuJoCo Warp pools ``nconmax * nworld`` over every world).
    nconmax: int
    #: Constraint rows per world.
    njmax: int

    def doubled(self) -> Buffers:
        return Buffers(2 * self.nconmax, 2 * self.njmax)


def size_buffers(model: mujoco.MjModel) -> Buffers:
    """Capacities for ``model``: every colliding geom of a moving body may touch
    :data:`_CONTACTS_PER_GEOM` points at once, each contact takes its worst case of constraint
    rows, and joint limits, equalities and friction loss take theirs; never less than the rest
    pose needs twice over."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    colliding = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
    moving = model.body_weldid[model.geom_bodyid] != 0
    if model.nmocap:
        moving |= model.body_mocapid[model.geom_bodyid] >= 0
    nconmax = max(16, _CONTACTS_PER_GEOM * int(np.count_nonzero(colliding & moving)) + model.npair * 4, 2 * data.ncon)
    condim = int(model.geom_condim.max()) if model.ngeom else 3
    elliptic = model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    rows_per_contact = condim if elliptic or condim == 1 else 2 * (condim - 1)
    equality_rows = {int(mujoco.mjtEq.mjEQ_CONNECT): 3, int(mujoco.mjtEq.mjEQ_WELD): 6}
    fixed_rows = (sum(equality_rows.get(int(t), 1) for t in model.eq_type) + 2 * int(np.count_nonzero(model.jnt_limited))
                  + int(np.count_nonzero(model.dof_frictionloss)) + 2 * int(np.count_nonzero(model.tendon_limited)))
    njmax = max(16, rows_per_contact * nconmax + fixed_rows, 2 * data.nefc)
    return Buffers(nconmax=_round_up(nconmax), njmax=_round_up(njmax))


def overflow_names(bits: int) -> list[str]:
    """The buffers an ``overflow`` bitmask says were too small (empty when none was)."""
    return [name for bit, name in BUFFER_OVERFLOWS.items() if bits & bit]


def buffer_overflow_mask() -> int:
    """The bits of ``Data.overflow`` that mean a buffer was too small."""
    return _BUFFER_MASK


def _round_up(value: int, step: int = 16) -> int:
    return int(-(-value // step) * step)
