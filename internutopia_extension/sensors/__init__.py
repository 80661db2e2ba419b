"""Built-in sensors (importing this package registers them): ``RepCamera``, ``MocapControlledCamera``."""

from internutopia_extension.sensors.mocap_controlled_camera import MocapControlledCamera  # noqa: F401
from internutopia_extension.sensors.rep_camera import RepCamera  # noqa: F401

__all__ = ['MocapControlledCamera', 'RepCamera']
