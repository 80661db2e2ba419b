"""Helpers of the mocap-teleoperated Franka tests (``test_franka_mocap*.py``): the robot and
controller names, the arm's place on its table, hand frames as actions and reading them back."""

from __future__ import annotations

import numpy as np

from internutopia_extension.configs.robots.mocap_controlled_franka import teleop_cfg

ROBOT, TELEOP = 'mocap_controlled_franka', teleop_cfg.name
BASE = np.array([-0.35, 0.0, 1.05])  # upstream's demo: the arm on a table
ORIGIN = BASE + teleop_cfg.origin_xyz  # env-local start of the end-effector target
DOWN = np.diag([1.0, -1.0, -1.0])  # the gripper pointing down
SCALE = teleop_cfg.scale


def fresh(env):
    """Both slots on a new episode (the arm at home, the target at its origin)."""
    obs, _ = env.reset()
    return obs


def action(*frames):
    """One action per slot, each sending its hand ``frame`` to the teleop controller."""
    return [{ROBOT: {TELEOP: [frame]}} for frame in frames]


def teleop_obs(obs, slot):
    """The teleop controller's observation in ``slot``."""
    return obs[slot][ROBOT]['controllers'][TELEOP]


def finger_gap(obs, slot) -> float:
    """The two fingers' joint positions summed: how far the gripper is open in ``slot``."""
    return float(np.sum(obs[slot][ROBOT]['joint_positions'][-2:]))


def turned_degrees(a: np.ndarray, b: np.ndarray) -> float:
    """The angle (degrees) between two rotation matrices."""
    return float(np.degrees(np.arccos(np.clip((np.trace(a.T @ b) - 1) / 2, -1.0, 1.0))))
