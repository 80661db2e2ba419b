"""The physics limit of a Gymnasium vector step: :class:`GymLimit` records every physics call a
vector env's world makes (the controls written, any state row written between two calls) and
replays them on raw ``mujoco.batch.Batch`` copies of its packs, the same motion with nothing of
ours around it. :mod:`internutopia.bench.gym_step` pairs each vector step with its replay.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

from internutopia.bench.paired import involuntary_switches
from internutopia.core.util.cpus import usable_cpus

__all__ = ['GymLimit']

_CONTROL_BITS = (mujoco.mjtState.mjSTATE_CTRL, mujoco.mjtState.mjSTATE_MOCAP_POS, mujoco.mjtState.mjSTATE_MOCAP_QUAT)
#: The state a slot's motion carries from one physics step to the next; a row of these that changed
#: between two steps was written by ours (a reset, a push), and the limit writes that whole row.
_MOTION_BITS = (mujoco.mjtState.mjSTATE_QPOS, mujoco.mjtState.mjSTATE_QVEL, mujoco.mjtState.mjSTATE_ACT)


def _columns(model: mujoco.MjModel, bits: tuple) -> np.ndarray:
    """The columns of the ``bits`` components in a batch's ``mjSTATE_INTEGRATION`` state row."""
    row = int(mujoco.mjtState.mjSTATE_INTEGRATION)
    parts = []
    for bit in bits:
        offset = mujoco.mj_stateSize(model, row & (int(bit) - 1))
        parts.append(np.arange(offset, offset + mujoco.mj_stateSize(model, int(bit))))
    return np.concatenate(parts)


class _Part:
    """One pack of the world and its limit batch, with what a round recorded of it."""

    def __init__(self, pack: Any, threads: int) -> None:
        self.pack = pack
        self.slots = pack.slots.copy()
        self.batch = mujoco.batch.Batch(pack.model, len(self.slots), nthread=threads, persistent=pack.batch.persistent)
        self.controls = _columns(pack.model, _CONTROL_BITS)
        self.motion = _columns(pack.model, _MOTION_BITS)
        self.start: np.ndarray | None = None
        self.after: np.ndarray | None = None  # motion columns after the last physics step (the round's start before its first)
        #: Per physics call: (controls, written rows, their state, physics steps in the call).
        self.steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []

    def before_step(self, steps: int) -> None:
        state = self.pack.batch.state[self.slots]
        assert self.after is not None, 'a physics call recorded before start_round'
        written = np.flatnonzero((state[:, self.motion] != self.after).any(axis=1))
        self.steps.append((state[:, self.controls], written, state[written], steps))

    def after_step(self) -> None:
        self.after = self.pack.batch.state[self.slots][:, self.motion]


class GymLimit:
    """Records every physics step of a vector env's world and replays them on raw batches.

    It replaces the world's ``step`` with a wrapper that times the physics call (``physics_s``) and,
    around it, records what the replay needs (``bookkeeping_s``: the time that took, for the caller
    to leave out of ours). Vector steps are marked with :meth:`end_vector_step`.
    """

    def __init__(self, world: Any, threads: int | None = None) -> None:

        self.world = world
        self.threads = threads or usable_cpus()
        self.physics_s = 0.0
        self.bookkeeping_s = 0.0
        self.parts: list[_Part] = []
        self.marks: list[int] = []  # physics calls recorded at the end of each vector step
        self.recording = False
        self._step = world.step
        world.step = self._recorded_step
        # (an action repeat run as one recorded call: physics too, replayed as the steps it ran)
        self._rollout = getattr(world, 'rollout', None)
        if self._rollout is not None:
            world.rollout = self._recorded_rollout

    def close(self) -> None:
        """Give the world its own step back."""
        del self.world.step  # (the instance attribute that shadowed the class's method)
        if self._rollout is not None:
            del self.world.rollout

    def _layout(self) -> list[tuple[str, tuple[int, ...]]]:
        return [(key, tuple(pack.slots.tolist())) for key, pack in self.world.packs.items() if len(pack.slots)]

    def start_round(self) -> None:
        """Remember the state now; the next physics steps are recorded for :meth:`replay`."""
        began = time.perf_counter()
        layout = self._layout()
        if [(p.pack.key, tuple(p.slots.tolist())) for p in self.parts] != layout:
            self.parts = [_Part(self.world.packs[key], self.threads) for key, _ in layout]
        for part in self.parts:
            part.start = part.pack.batch.state[part.slots].copy()
            # (rows written before the round's first physics call, an autoreset at its first vector
            # step, are found against the round's start: the replay starts there too)
            part.after, part.steps = part.start[:, part.motion], []
        self.marks = []
        self.recording = True
        self.bookkeeping_s += time.perf_counter() - began

    def _recorded_step(self, steps: int = 1) -> None:
        self._physics_call(steps, self._step if steps == 1 else lambda: self._step(steps))

    def _recorded_rollout(self, steps: int, fields: tuple[str, ...]) -> Any:
        rollout = self._rollout
        assert rollout is not None  # (wrapped only where the world has one)
        return self._physics_call(steps, lambda: rollout(steps, fields), declines=True)

    def _physics_call(self, steps: int, call: Callable[[], Any], declines: bool = False) -> Any:
        """``call`` (``steps`` physics steps) timed as physics, with what the replay needs
        recorded around it; ``declines``: a ``None`` answer advanced nothing (a rollout the world
        did not run: the repeat goes step by step, each step recorded then)."""
        if self.recording:
            began = time.perf_counter()
            for part in self.parts:
                part.before_step(steps)
            self.bookkeeping_s += time.perf_counter() - began
        began = time.perf_counter()
        done = call()
        ended = time.perf_counter()
        self.physics_s += ended - began
        if self.recording:
            for part in self.parts:
                if declines and done is None:
                    part.steps.pop()
                else:
                    part.after_step()
            self.bookkeeping_s += time.perf_counter() - ended
        return done

    def end_vector_step(self) -> None:
        """Mark the end of one vector step (its physics steps are replayed as one)."""
        self.marks.append(len(self.parts[0].steps) if self.parts else 0)

    def replay_steps(self, clock: Callable[[], float] = time.perf_counter,
                     switches: Callable[[], int] = involuntary_switches) -> tuple[np.ndarray, np.ndarray]:
        """Replay the round: seconds of each vector step's physics, and whether it ran unpreempted.

        Raises:
            RuntimeError: the world's packs changed during the round (a new structure: the limit
                cannot follow a slot into another model).
        """
        self.recording = False
        if self._layout() != [(p.pack.key, tuple(p.slots.tolist())) for p in self.parts]:
            raise RuntimeError('a slot changed structure during the round: the gym benchmark needs ids whose '
                               'episodes keep one scene and robot')
        physics_steps = self.marks[-1] if self.marks else 0
        seconds = np.zeros(physics_steps)
        clean = np.ones(physics_steps, dtype=bool)
        for part in self.parts:
            state, substeps = part.batch.state, part.pack.substeps
            assert part.start is not None, 'replay before start_round'
            state[:] = part.start
            part.batch.forward()
            for k, (controls, written, rows, steps) in enumerate(part.steps[:physics_steps]):
                before = switches()
                began = clock()
                if len(written):
                    state[written] = rows
                state[:, part.controls] = controls
                part.batch.step(nstep=substeps * steps)  # (the physics steps ours fused in one call: one here too)
                seconds[k] += clock() - began
                clean[k] &= switches() == before
        bounds = [0, *self.marks]
        per_step = np.array([seconds[a:b].sum() for a, b in zip(bounds, bounds[1:], strict=False)])
        per_clean = np.array([clean[a:b].all() for a, b in zip(bounds, bounds[1:], strict=False)])
        return per_step, per_clean
