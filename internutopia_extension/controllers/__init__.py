"""Built-in controllers; importing this package registers them."""

from internutopia_extension.controllers import (  # noqa: F401
    aliengo_move_by_speed_controller,
    base_motion,
    differential_drive,
    franka_mocap_teleop_controller,
    gr1_move_by_speed_controller,
    gripper_controller,
    h1_leg_action,
    h1_move_by_speed_controller,
    holonomic_base,
    ik_controller,
    joint_controller,
    oracle,
    recover,
)
