"""``RecordingMetricCfg``: observations of a robot, recorded every step (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import MetricCfg


class RecordingMetricCfg(MetricCfg):
    """Records observations of robot ``robot_name`` every step (InternUtopia's ``RecordingMetric``).

    ``fields`` lists keys of the robot's observation to keep (e.g. ``['joint_action']``,
    ``['eef_position', 'controllers']``); ``None`` keeps the whole observation. The value is
    ``{step: {robot_name: {field: value}}}`` with steps counted from 0 and arrays as lists.
    """

    type: str = 'RecordingMetric'
    name: str | None = 'recording_metric'
    robot_name: str
    fields: list[str] | None = None


__all__ = ['RecordingMetricCfg']
