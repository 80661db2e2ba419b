"""``GR1MoveBySpeedControllerCfg``: GR1's ``move_by_speed`` (InternUtopia's module path)."""

from __future__ import annotations

from internutopia_extension.configs.controllers.holonomic_base_controller import HolonomicBaseControllerCfg


class GR1MoveBySpeedControllerCfg(HolonomicBaseControllerCfg):
    """GR1's ``move_by_speed``: ``[forward, lateral, yaw_rate]`` (InternUtopia's optional 4th and 5th
    values, a pelvis height and upper-body joint targets, are accepted when ``None``).

    The command is the walking policy's velocity command (``GR1RobotCfg.locomotion='walking'``, the
    default) or moves the carried pelvis (``'carried'``).
    ``joint_names`` and ``policy_weights_path`` (InternUtopia's policy, which is not on PyPI) are
    accepted for compatibility and unused.
    """

    type: str = 'GR1MoveBySpeedController'
    joint_names: list[str] | None = None
    policy_weights_path: str | None = None


__all__ = ['GR1MoveBySpeedControllerCfg']
