"""Config classes of the built-in sensors: :mod:`.rep_camera` (``RepCameraCfg``)."""

from internutopia_extension.configs.sensors.rep_camera import RepCameraCfg

__all__ = ['RepCameraCfg']
