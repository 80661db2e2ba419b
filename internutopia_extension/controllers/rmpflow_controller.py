"""InternUtopia's module path of ``RMPFlowController``: the damped least-squares IK controller under that name (``recover`` says why)."""

from internutopia_extension.controllers.ik_controller import InverseKinematicsController as RMPFlowController

__all__ = ['RMPFlowController']
