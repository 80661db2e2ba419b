"""Built-in sensors (importing this package registers them): ``RepCamera``."""

from internutopia_extension.sensors.rep_camera import RepCamera  # noqa: F401

__all__ = ['RepCamera']
