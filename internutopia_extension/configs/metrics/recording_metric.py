"""``RecordingMetricCfg``: observations of a robot, recorded every step (InternUtopia's module path)."""

from __future__ import annotations

from typing import ClassVar

from internutopia.core.config import MetricCfg


class RecordingMetricCfg(MetricCfg):
    """Records observations of robot ``robot_name`` every step (InternUtopia's ``RecordingMetric``).

    ``fields`` lists keys of the robot's observation to keep (e.g. ``['joint_action']``,
    ``['eef_position', 'controllers']``); ``None`` keeps the whole observation. The value is
    ``{step: {robot_name: {field: value}}}`` with steps counted from 0 and arrays as lists.

    A task config checks ``robot_name`` when it is built: a name that is not one of the
    task's robots is a ``ValueError``, except in a one-robot task, whose robot is recorded whatever
    the name (with a warning at the reset), as InternUtopia's metric does. ``fields`` are checked
    at the reset that starts the episode (a robot's observation keys depend on its class,
    controllers and sensors): a field the robot does not observe fails that episode's start, which
    is recorded as failed with a ``RuntimeWarning`` naming the fields there are.
    """

    type: str = 'RecordingMetric'
    any_robot_when_alone: ClassVar[bool] = True  # (as InternUtopia's RecordingMetric)
    name: str | None = 'recording_metric'
    robot_name: str
    fields: list[str] | None = None


__all__ = ['RecordingMetricCfg']
