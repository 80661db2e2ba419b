"""``H1MoveBySpeedControllerCfg``: H1's ``move_by_speed`` (InternUtopia's module path)."""

from __future__ import annotations

from internutopia_extension.configs.controllers.holonomic_base_controller import HolonomicBaseControllerCfg


class H1MoveBySpeedControllerCfg(HolonomicBaseControllerCfg):
    """H1's ``move_by_speed``. No trained H1 walking policy is available on PyPI, so this drives
    the pelvis as a holonomic base; ``policy_weights_path`` is accepted for compatibility and unused."""

    type: str = 'H1MoveBySpeedController'
    policy_weights_path: str | None = None
    joint_names: list[str] | None = None


__all__ = ['H1MoveBySpeedControllerCfg']
