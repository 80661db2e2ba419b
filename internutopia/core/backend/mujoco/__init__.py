"""The embedded MuJoCo backend (default): one ``MjSpec`` world holding every env slot."""

from internutopia.core.backend.mujoco.world import MujocoWorld, Shard, SlotPart

__all__ = ["MujocoWorld", "Shard", "SlotPart"]
