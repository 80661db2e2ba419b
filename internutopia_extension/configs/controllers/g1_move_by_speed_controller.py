"""``G1MoveBySpeedControllerCfg``: G1's ``move_by_speed`` through its walking policy (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class G1MoveBySpeedControllerCfg(ControllerCfg):
    """G1's ``move_by_speed``: velocity commands fed to the trained ONNX walking policy.

    ``policy`` picks holosoma's ``'ppo'`` or ``'fastsac'`` policy. ``policy_weights_path`` and
    ``joint_names`` (InternUtopia's TorchScript policy and its joint order) are accepted and unused:
    the ONNX policy has its own joint order.
    """

    type: str = 'G1MoveBySpeedController'
    policy: str = 'ppo'
    policy_weights_path: str | None = None
    joint_names: list[str] | None = None


__all__ = ['G1MoveBySpeedControllerCfg']
