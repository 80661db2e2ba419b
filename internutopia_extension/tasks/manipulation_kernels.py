"""The manipulation task's per-step arithmetic (pick-and-place state, success, shaped reward) as one compiled loop.

:meth:`~internutopia_extension.tasks.manipulation.ManipulationTask.step` runs on every physics
step of a Franka episode, twelve times per action of the Gymnasium ids: about forty numpy calls
on 64-element arrays each time (with its gathers, a seventh of a FrankaReach-v0 vector step).
:func:`place_rows` does the same float64 operations in the same order per slot, in one call; the
numpy version (``ManipulationTask._place_numpy``) stays the reference and the path without numba
(``INTERNUTOPIA_JIT=0``). Both give the same state bit for bit and the same rewards to 1e-14
(``tests/test_manipulation_kernels.py``): ``tanh`` is numpy's in one and the C library's in the
other, which may differ in the last bit.

Arguments are the task's own arrays: ``slots`` are slot ids, per-slot state is indexed by slot,
the gathered inputs (object pose and velocity, tool frame, gripper) and the outputs by row.
"""

from __future__ import annotations

import math

from internutopia.core.util.jit import Kernel

__all__ = ['place_kernel']


def place_rows(slots, position, velocity, tcp, opened, opening, goal, start_height, success_distance, goal_kind,
               rest_needed, reward_scales, held_before, lifted_before, dropped, held_out, lifted_out, distance_out,
               rest_steps, success_out, term_table, hold_distance, lift_height, pick_height, rest_speed, rest_spin,
               tanh_scale, success, reward):  # pragma: no cover - compiled
    """Per row ``i`` (slot ``slots[i]``): ``ManipulationTask._place_numpy``'s update of the slot's
    held, lifted, dropped, distance, rest steps, success and reward terms, and ``success[i]`` and
    ``reward[i]``. Goal kinds: 0 place, 1 pick, 2 reach (``manipulation._GOALS``)."""
    for i in range(slots.shape[0]):
        s = slots[i]
        dx, dy, dz = position[i, 0] - goal[s, 0], position[i, 1] - goal[s, 1], position[i, 2] - goal[s, 2]
        distance = math.sqrt(dx * dx + dy * dy + dz * dz)
        rx, ry, rz = tcp[i, 0] - position[i, 0], tcp[i, 1] - position[i, 1], tcp[i, 2] - position[i, 2]
        reach = math.sqrt(rx * rx + ry * ry + rz * rz)
        held = (not opened[i]) and reach < hold_distance
        lifted = lifted_before[s] or (held and position[i, 2] > start_height[s] + lift_height)
        # Dropped: it was held up high and left the gripper while the gripper stayed closed.
        dropped[s] = dropped[s] or (held_before[s] and lifted and not held and not opening[i])
        held_out[s] = held
        lifted_out[s] = lifted and held  # a new lift is needed after a release
        distance_out[s] = distance
        vx, vy, vz = velocity[i, 0], velocity[i, 1], velocity[i, 2]
        wx, wy, wz = velocity[i, 3], velocity[i, 4], velocity[i, 5]
        still = math.sqrt(vx * vx + vy * vy + vz * vz) < rest_speed and math.sqrt(wx * wx + wy * wy + wz * wz) < rest_spin
        rest_steps[s] = rest_steps[s] + 1 if still else 0
        resting = rest_steps[s] >= rest_needed[s]
        rise = position[i, 2] - start_height[s]
        kind = goal_kind[s]
        if kind == 0:
            done = distance < success_distance[s] and resting and opened[i] and not held
        elif kind == 1:
            done = held and rise >= pick_height
        else:
            done = reach < success_distance[s]
        success_out[s] = done
        success[i] = done
        # The shaped reward: named terms in [0, 1], each scaled, added in the terms' order.
        lift = rise / pick_height
        lift = 0.0 if lift < 0.0 else (1.0 if lift > 1.0 else lift)
        terms = (1.0 - math.tanh(tanh_scale * (reach if math.isfinite(reach) else 1e3)), 1.0 if held else 0.0,
                 (1.0 if held else 0.0) * lift, (1.0 if held or resting else 0.0) * (1.0 - math.tanh(tanh_scale * distance)),
                 1.0 if done else 0.0)
        value = 0.0
        for column in range(5):
            term_table[column, s] = terms[column]
            value += reward_scales[s, column] * terms[column]
        reward[i] = value


#: The kernel: compiled on first use (then cached on disk), or unavailable without numba.
place_kernel = Kernel(place_rows)
