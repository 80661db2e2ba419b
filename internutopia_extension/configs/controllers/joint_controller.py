"""``JointControllerCfg``: joint position targets (InternUtopia's module path)."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class JointControllerCfg(ControllerCfg):
    """Position targets for ``joint_names`` (all actuated joints when ``None``)."""

    type: str = 'JointController'
    joint_names: list[str] | None = None


__all__ = ['JointControllerCfg']
