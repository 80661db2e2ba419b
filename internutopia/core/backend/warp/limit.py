"""The physics limit of a Warp world (the benchmark's ``--backend warp``): raw ``mujoco_warp.step``.

The counterpart of :class:`internutopia.limit.PhysicsLimit` for the Warp backend, with the same
methods (``start_round``, ``record``, ``replay``, ``replay_steps``), so the benchmark's paired
timing (:mod:`internutopia.bench.paired`) measures ours against it. For each pack with slots it
keeps a second MuJoCo Warp ``Data`` of the pack's device model, as large as the pack's (a world
per env slot) and with the same buffers. A round starts from the pack's state; per step the
limit writes the controls ours applied (``ctrl`` and mocap poses, host to device as ours does)
and calls ``mujoco_warp.step`` ``substeps`` times: the calls an env step on this backend cannot do
without, and nothing else.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.backend.warp.pack import WarpPack

__all__ = ['WarpLimit']

#: What a controller writes, recorded per step and replayed.
_CONTROLS = ('ctrl', 'mocap_pos', 'mocap_quat')
#: The state a round starts from.
_START = ('qpos', 'qvel', 'act', 'ctrl', 'qfrc_applied', 'xfrc_applied', 'mocap_pos', 'mocap_quat')


class WarpLimit:
    """Replays a Warp world's recorded controls on raw MuJoCo Warp data of its packs' models."""

    def __init__(self, world: Any) -> None:
        self._packs: list[WarpPack] = [pack for pack in world.packs.values() if isinstance(pack, WarpPack) and len(pack.slots)]
        self._wp = world._wp
        self._mjw = world._mjw
        self._data = []
        for pack in self._packs:
            with self._wp.ScopedDevice(pack.device):
                self._data.append(pack._make_data(pack.buffers))
        self._start: list[dict[str, np.ndarray]] = []
        self._controls: list[dict[str, np.ndarray]] = []
        self.steps = 0

    def start_round(self, steps: int) -> None:
        """Remember every pack's state now, and make room for ``steps`` steps of controls."""
        self.steps = steps
        self._start = [{name: getattr(pack.data, name).astype(np.float32) for name in _START} for pack in self._packs]
        self._controls = [{name: np.empty((steps, *getattr(pack.data, name).shape), dtype=np.float32) for name in _CONTROLS}
                          for pack in self._packs]

    def record(self, step: int) -> None:
        """Record the controls ours applied on step ``step`` of the round (call after each step)."""
        for pack, controls in zip(self._packs, self._controls, strict=True):
            for name in _CONTROLS:
                controls[name][step] = getattr(pack.data, name)

    def _begin(self, index: int) -> Any:
        pack, data = self._packs[index], self._data[index]
        for name, values in self._start[index].items():
            if values.size:
                getattr(data, name).assign(values)
        self._mjw.forward(pack.wmodel, data)
        return data

    def _step(self, index: int, data: Any, step: int) -> None:
        pack, controls = self._packs[index], self._controls[index]
        for name in _CONTROLS:
            if controls[name].size:
                getattr(data, name).assign(controls[name][step])
        for _ in range(pack.substeps):
            self._mjw.step(pack.wmodel, data)

    def replay_steps(self, clock: Callable[[], float] = time.perf_counter,
                     switches: Callable[[], int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Step the limit's data through the recorded round, timing each step (the device is
        synchronized before a step's time is taken).

        Returns:
            ``(seconds, clean)``: the time of each step (summed over the packs), and whether no
            thread of the process was preempted during it (all true without ``switches``).
        """
        seconds = np.zeros(self.steps)
        clean = np.ones(self.steps, dtype=bool)
        for index, pack in enumerate(self._packs):
            with self._wp.ScopedDevice(pack.device):
                data = self._begin(index)
                self._wp.synchronize_device()
                for step in range(self.steps):
                    before = switches() if switches is not None else 0
                    began = clock()
                    self._step(index, data, step)
                    self._wp.synchronize_device()
                    seconds[step] += clock() - began
                    if switches is not None and switches() != before:
                        clean[step] = False
        return seconds, clean

    def replay(self) -> float:
        """Step the limit's data through the recorded round; return seconds per step."""
        seconds, _ = self.replay_steps()
        return float(seconds.sum()) / max(self.steps, 1)
