"""The physics limit a run of ``vec_env.Env`` is measured against (used by :mod:`internutopia.bench`).

The limit is the same models doing the same motion with nothing but MuJoCo: for each pack of the
world (the slots of one structure), a ``mujoco.batch.Batch`` of the pack's own model with a
simulation per slot, on every core, set up as the world's own. A measurement round of ours starts
from some state and applies, step by step, the controls its controllers compute (``ctrl`` and
mocap poses). The limit's round starts from that same state and, per step, writes the recorded
controls of that step (one numpy assignment) and calls ``Batch.step()``: the raw per-step call an
env step cannot do without, and nothing else. So both sides simulate exactly the same contacts
and motion, and the ratio measures what the Python around the physics costs.

(Stepping the robots without their controls would not do: an H1 standing still is cheaper to
simulate than one gliding along a path, and the ratio would then mix a lighter workload into the
limit.)

Typical use::

    limit = PhysicsLimit(env.runner.world)
    limit.start_round(steps)
    for k in range(steps):
        env.step(actions)
        limit.record(k)
    seconds_per_step = limit.replay()
"""

from __future__ import annotations

import time
from collections.abc import Callable

import mujoco
import mujoco.batch
import numpy as np

from internutopia.core.util.cpus import usable_cpus

#: The state components a controller writes.
_CONTROL_BITS = (mujoco.mjtState.mjSTATE_CTRL, mujoco.mjtState.mjSTATE_MOCAP_POS, mujoco.mjtState.mjSTATE_MOCAP_QUAT)


class PhysicsLimit:
    """Replays a world's recorded controls on raw ``mujoco.batch.Batch`` copies of its packs."""

    def __init__(self, world, threads: int | None = None) -> None:
        threads = threads or usable_cpus()
        self._parts = []
        for pack in world.packs.values():
            if not len(pack.slots):
                continue
            batch = mujoco.batch.Batch(pack.model, len(pack.slots), nthread=threads, persistent=pack.batch.persistent)
            self._parts.append(_Part(pack, batch, _state_columns(pack.model)))
        self.steps = 0

    def start_round(self, steps: int) -> None:
        """Remember every pack's state now, and make room for ``steps`` steps of controls."""
        self.steps = steps
        for part in self._parts:
            part.start = part.pack.batch.state[part.pack.slots].copy()
            part.controls = np.empty((steps, len(part.pack.slots), sum(size for _, size in part.columns)))

    def record(self, step: int) -> None:
        """Record the controls ours applied on step ``step`` of the round (call after each step)."""
        for part in self._parts:
            state = part.pack.batch.state
            rows = state if len(part.pack.slots) == len(state) else state[part.pack.slots]
            assert part.controls is not None, 'record before start_round'
            out, at = part.controls[step], 0
            for offset, size in part.columns:
                out[:, at:at + size] = rows[:, offset:offset + size]
                at += size

    def replay_steps(self, clock: Callable[[], float] = time.perf_counter,
                     switches: Callable[[], int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Step the limit's batches through the recorded round, timing each step.

        Args:
            clock: seconds now.
            switches: the process's count of involuntary context switches, read around each
                step when given (:func:`internutopia.bench.paired.involuntary_switches`).

        Returns:
            ``(seconds, clean)``: the time of each step (summed over the packs), and whether no
            thread of the process was preempted during it (all true without ``switches``).
        """
        seconds = np.zeros(self.steps)
        clean = np.ones(self.steps, dtype=bool)
        for part in self._parts:
            batch, controls = part.batch, part.controls
            assert controls is not None, 'replay before start_round'
            columns = np.concatenate([np.arange(offset, offset + size) for offset, size in part.columns])
            state = batch.state
            state[:] = part.start
            batch.forward()
            substeps = part.pack.substeps
            for step in range(self.steps):
                before = switches() if switches is not None else 0
                began = clock()
                state[:, columns] = controls[step]
                batch.step(nstep=substeps)  # as the pack steps (substeps for robots that need them)
                seconds[step] += clock() - began
                if switches is not None and switches() != before:
                    clean[step] = False
        return seconds, clean

    def replay(self) -> float:
        """Step the limit's batches through the recorded round; return seconds per step."""
        elapsed = 0.0
        for part in self._parts:
            batch, controls = part.batch, part.controls
            assert controls is not None, 'replay before start_round'
            columns = np.concatenate([np.arange(offset, offset + size) for offset, size in part.columns])
            state = batch.state
            state[:] = part.start
            batch.forward()
            began = time.perf_counter()
            for step in range(self.steps):
                state[:, columns] = controls[step]
                batch.step(nstep=part.pack.substeps)  # as the pack steps (substeps for robots that need them)
            elapsed += time.perf_counter() - began
        return elapsed / max(self.steps, 1)


def _state_columns(model: mujoco.MjModel) -> list[tuple[int, int]]:
    """``(offset, size)`` of each control component in a batch's state row (``mjSTATE_INTEGRATION``,
    laid out in bit order, so a component starts after the sizes of the lower bits)."""
    row = int(mujoco.mjtState.mjSTATE_INTEGRATION)
    return [(mujoco.mj_stateSize(model, row & (int(bit) - 1)), mujoco.mj_stateSize(model, int(bit))) for bit in _CONTROL_BITS]


class _Part:
    def __init__(self, pack, batch: mujoco.batch.Batch, columns: list[tuple[int, int]]) -> None:
        self.pack, self.batch, self.columns = pack, batch, columns
        self.start: np.ndarray | None = None
        self.controls: np.ndarray | None = None
