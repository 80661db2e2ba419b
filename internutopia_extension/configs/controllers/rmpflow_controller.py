"""``RMPFlowControllerCfg``: InternUtopia's RMPflow arm controller, run by the IK controller (InternUtopia's module path)."""

from __future__ import annotations

from internutopia_extension.configs.controllers.ik_controller import InverseKinematicsControllerCfg


class RMPFlowControllerCfg(InverseKinematicsControllerCfg):
    """InternUtopia's RMPflow arm controller (Isaac Sim's Lula motion policy), same fields.

    Lula is part of Isaac Sim; here the target ``[position, orientation]`` is reached by the
    inverse-kinematics controller on the MuJoCo model (no obstacle avoidance). The Lula files
    (``robot_description_path``, ``robot_urdf_path``, ``rmpflow_config_path``) are accepted and unused.
    """

    type: str = 'RMPFlowController'
    rmpflow_config_path: str | None = None


__all__ = ['RMPFlowControllerCfg']
