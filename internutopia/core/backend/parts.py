"""What a world is built from: each slot's content as parts, one per robot, object and scene."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mujoco

__all__ = ['SlotPart']


@dataclass
class SlotPart:
    """One piece of a slot's content: a standalone spec attached under the name prefix ``prefix``.

    ``spec`` is a MuJoCo ``MjSpec`` (robots, objects and scenes describe themselves as one; every
    MuJoCo-family backend compiles it, another engine converts it). Every element of the part
    is named ``{prefix}{name}`` in the compiled model.

    ``contact_root`` names a body of ``spec`` whose subtree's contacts the world summarizes for
    :meth:`~internutopia.core.backend.interface.Pack.contact_readings` (every contact: count and
    normals; and the count of those with static world geoms).
    """

    prefix: str
    spec: mujoco.MjSpec
    contact_root: str | None = None
    #: Longest physics step this part stays accurate with (e.g. a robot whose servos were tuned
    #: for 200 Hz); a slot holding it is stepped in equal substeps no longer than this.
    max_dt: float | None = None
