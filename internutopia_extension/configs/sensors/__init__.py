"""Config classes of the built-in sensors: :mod:`.rep_camera` (``RepCameraCfg``), :mod:`.mocap_controlled_camera` (``MocapControlledCameraCfg``)."""

from internutopia_extension.configs.sensors.mocap_controlled_camera import MocapControlledCameraCfg
from internutopia_extension.configs.sensors.rep_camera import RepCameraCfg

__all__ = ['MocapControlledCameraCfg', 'RepCameraCfg']
