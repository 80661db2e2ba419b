"""``H1MoveBySpeedControllerCfg``: H1's ``move_by_speed`` (InternUtopia's module path)."""

from __future__ import annotations

from internutopia_extension.configs.controllers.holonomic_base_controller import HolonomicBaseControllerCfg


class H1MoveBySpeedControllerCfg(HolonomicBaseControllerCfg):
    """H1's ``move_by_speed``: ``[forward, lateral, yaw_rate]``, the walking policy's velocity command
    (``H1RobotCfg.locomotion='walking'``, the default) or the carried pelvis's velocity
    (``'carried'``). ``policy_weights_path`` (InternUtopia's rsl_rl policy, not on PyPI) is accepted
    for compatibility and unused: ``H1RobotCfg.walking_policy`` picks the policy."""

    type: str = 'H1MoveBySpeedController'
    policy_weights_path: str | None = None
    joint_names: list[str] | None = None


__all__ = ['H1MoveBySpeedControllerCfg']
