"""``AliengoMoveBySpeedControllerCfg``: Aliengo's ``move_by_speed`` (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class AliengoMoveBySpeedControllerCfg(ControllerCfg):
    """Aliengo's ``move_by_speed``: ``[forward, lateral, yaw_rate]`` fed to its walking policy as
    the velocity command (clipped to the range the policy was trained for).

    ``policy_weights_path`` and ``joint_names`` (InternUtopia's TorchScript policy and its joint
    order) are accepted and unused: the policy is the robot's (``AliengoRobotCfg.walking_policy``)
    and knows its joints.
    """

    type: str = 'AliengoMoveBySpeedController'
    policy_weights_path: str | None = None
    joint_names: list[str] | None = None


__all__ = ['AliengoMoveBySpeedControllerCfg']
