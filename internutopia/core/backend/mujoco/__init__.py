"""The embedded MuJoCo backend (default): the grid of env slots, a pack of ``mujoco.batch`` simulations per structure."""

from internutopia.core.backend.mujoco.lookup import MujocoLookup
from internutopia.core.backend.mujoco.world import MujocoWorld, Pack, PackData, SlotPart

__all__ = ["MujocoLookup", "MujocoWorld", "Pack", "PackData", "SlotPart"]
