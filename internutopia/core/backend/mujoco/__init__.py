"""The embedded MuJoCo backend (default): one ``MjSpec`` world holding every env slot."""

from internutopia.core.backend.mujoco.world import MujocoWorld, Pack, SlotPart

__all__ = ["MujocoWorld", "Pack", "SlotPart"]
