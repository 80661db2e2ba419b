"""Built-in controllers; importing this package registers them."""

from internutopia_extension.controllers import base_motion, differential_drive, holonomic_base, joint_controller  # noqa: F401
