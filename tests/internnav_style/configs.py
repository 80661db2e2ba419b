"""Config classes of the InternNav-style package (extra keys kept, as upstream's task configs do)."""

from __future__ import annotations

from internutopia.core.config.metric import MetricCfg
from internutopia.core.config.robot import ControllerCfg
from internutopia.core.config.task import TaskCfg
from internutopia_extension.configs.robots.h1 import H1RobotCfg


class NavH1Cfg(H1RobotCfg):
    type: str = 'NavH1'
    #: Below this ankle height above the start (m) the robot counts as fallen.
    fall_height: float = -0.3


class DiscreteMoveCfg(ControllerCfg):
    type: str = 'DiscreteMove'
    forward_speed: float = 0.5
    turn_speed: float = 1.0


class NavTaskCfg(TaskCfg):
    type: str = 'NavTask'
    goal: tuple[float, float] = (1.0, 0.0)
    success_distance: float = 0.25
    max_steps: int = 500


class PathMetricCfg(MetricCfg):
    type: str = 'PathMetric'
    name: str = 'path_metric'
