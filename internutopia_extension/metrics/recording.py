"""``RecordingMetric``: a robot's observation fields, every step (InternUtopia's recording metric).

Each step, for all slots recording the same robot group at once, the group's observation is
gathered once and the listed ``fields`` are kept per slot (copies). When the episode ends the
record is ``{step: {robot_name: {field: value}}}``, arrays turned into lists so it can be saved as
JSON. Memory grows with the episode length: record the fields you need.

InternUtopia's metric records the episode's one robot whatever ``robot_name`` says (its mocap demo
names ``'franka'`` for a robot called ``'mocap_controlled_franka'``): where ``robot_name`` is not
in a one-robot episode, this one records that robot too, under its own name, with a warning.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from internutopia.core.metric.base import BaseMetric
from internutopia.core.view import EnvView


@BaseMetric.register('RecordingMetric')
class RecordingMetric(BaseMetric):
    """See the module docstring; the config is a ``RecordingMetricCfg`` (``robot_name``, ``fields``)."""

    def __init__(self, config, view: EnvView) -> None:
        super().__init__(config, view)
        self.robot_name = config.robot_name
        self.fields = list(config.fields) if config.fields is not None else None
        self.robot = view.tracker()
        self.records: list[list[Any]] = [[] for _ in range(self.env_num)]
        self.slot_robot = [self.robot_name] * self.env_num  # the robot each slot records

    def reset_slot(self, slot: int, task) -> None:
        name, robots = self.robot_name, [robot.name for robot in task.robots]
        if name not in robots and len(robots) == 1:
            warnings.warn(f'{self.name}: robot_name {name!r} is not in the episode; recording its one robot {robots[0]!r}, '
                          "as InternUtopia's RecordingMetric does", UserWarning, stacklevel=2)
            name = robots[0]
        self.slot_robot[slot] = name
        self.robot.track(slot, name)
        self.records[slot] = []
        if self.fields is not None:
            # Checked here, at the reset, so that a bad field never fails a step half done.
            keys = self.robot.entity(slot).get_obs(np.array([slot], dtype=np.intp)).keys()
            missing = [field for field in self.fields if field not in keys]
            if missing:
                raise ValueError(f'{self.name}: robot {name!r} has no observation field(s) {missing}; '
                                 f'its fields: {sorted(keys)}')

    def update(self, slots: np.ndarray) -> None:
        for group, _rows, members in self.robot.groups(slots):
            obs = group.get_obs(members)
            if self.fields is not None:
                obs = {field: obs[field] for field in self.fields}
            for row, slot in enumerate(members.tolist()):
                self.records[slot].append(_row(obs, row))

    def calc(self, slot: int) -> dict[int, dict[str, Any]]:
        return {step: {self.slot_robot[slot]: _jsonable(record)} for step, record in enumerate(self.records[slot])}


def _row(tree: Any, row: int) -> Any:
    """Row ``row`` of every leaf of a tree of arrays with a leading slot axis (a copy)."""
    if isinstance(tree, dict):
        return {key: _row(value, row) for key, value in tree.items()}
    value = tree[row]
    return value.copy() if isinstance(value, np.ndarray) else value


def _jsonable(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {key: _jsonable(value) for key, value in tree.items()}
    if isinstance(tree, (np.ndarray, np.generic)):
        return tree.tolist()
    if isinstance(tree, (list, tuple)):
        return [_jsonable(value) for value in tree]
    return tree
