"""Finding diverged worlds on the device: one Warp kernel, one thread per world.

CPU MuJoCo checks every step for NaN, Inf or a huge value (``mjMAXVAL``) in positions,
velocities and accelerations and resets a simulation that has one (the MuJoCo backend reports
those slots). MuJoCo Warp checks nothing: a world that blew up keeps stepping NaN. This kernel
does the same check on the device arrays, so only a flag per world crosses to the host.
"""

from __future__ import annotations

from typing import Any

import mujoco
import warp as wp

__all__ = ['MAX_VALUE', 'find_diverged']

#: Largest magnitude a healthy state holds (MuJoCo's own bound, ``mjMAXVAL``).
MAX_VALUE = float(mujoco.mjMAXVAL)


@wp.func
def _bad(value: wp.float32, limit: wp.float32) -> wp.int32:
    if wp.isnan(value) or wp.isinf(value) or wp.abs(value) > limit:
        return 1
    return 0


@wp.kernel(enable_backward=False)
def _diverged_worlds(qpos: wp.array2d[wp.float32], qvel: wp.array2d[wp.float32],
                     qacc: wp.array2d[wp.float32], limit: wp.float32, out: wp.array[wp.int32]):
    world = wp.tid()
    bad = wp.int32(0)
    for i in range(qpos.shape[1]):
        bad = bad | _bad(qpos[world, i], limit)
    for i in range(qvel.shape[1]):
        bad = bad | _bad(qvel[world, i], limit) | _bad(qacc[world, i], limit)
    out[world] = bad


def find_diverged(data: Any, out: Any) -> None:
    """Write 1 into ``out[w]`` for each world ``w`` of MuJoCo Warp ``data`` whose ``qpos``,
    ``qvel`` or ``qacc`` holds a NaN, an Inf or a value beyond :data:`MAX_VALUE`, else 0."""
    wp.launch(_diverged_worlds, dim=data.nworld, inputs=[data.qpos, data.qvel, data.qacc, MAX_VALUE], outputs=[out],
              device=out.device)
