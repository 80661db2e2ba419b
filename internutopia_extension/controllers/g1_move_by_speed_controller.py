"""InternUtopia's module path of G1's ``move_by_speed`` controller (it lives with the G1 robot)."""

from internutopia_extension.robots.g1 import G1MoveBySpeedController

__all__ = ['G1MoveBySpeedController']
