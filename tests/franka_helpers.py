"""Helpers of the Franka tests (``test_franka*.py``): the empty scene, the gripper pointing down, a
Panda config with the arm, gripper and joint controllers."""

from __future__ import annotations

from internutopia.macros import gm
from internutopia_extension.configs.robots.franka import (
    FrankaRobotCfg,
    arm_ik_cfg,
    gripper_cfg,
    joint_controller_cfg,
)

SCENE = gm.ASSET_PATH + '/scenes/empty.usd'
#: wxyz of the tool pointing straight down.
DOWN = (0.0, 1.0, 0.0, 0.0)


def franka(**kw):
    """A Panda config (``kw``: FrankaRobotCfg fields) with the IK arm, gripper and joint controllers by default."""
    kw.setdefault('controllers', [arm_ik_cfg, gripper_cfg, joint_controller_cfg])
    return FrankaRobotCfg(**kw)
