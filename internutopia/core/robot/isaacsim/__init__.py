"""InternUtopia's ``internutopia.core.robot.isaacsim``: Isaac Sim's implementations of its robot
interfaces, importable here so that extensions importing them load; see :mod:`.articulation`."""

from internutopia.core.robot.isaacsim.articulation import IsaacsimArticulation

__all__ = ['IsaacsimArticulation']
