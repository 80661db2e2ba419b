"""InternUtopia's module path of the differential-drive controller (see ``differential_drive``)."""

from internutopia_extension.controllers.differential_drive import DifferentialDriveController

__all__ = ['DifferentialDriveController']
