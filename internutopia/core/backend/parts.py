"""What a world is built from: each slot's content as parts, one per robot, object and scene."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mujoco import MjSpec as ModelSpec
else:
    #: The builder interface of a part's model: a MuJoCo ``MjSpec`` (robots, objects, sensors and
    #: scenes describe themselves as one; MuJoCo-family backends compile it, another engine
    #: converts it). Code outside the backend names the type as ``ModelSpec``, never ``mujoco``.
    ModelSpec = Any

__all__ = ['ModelSpec', 'SlotPart', 'load_spec']


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
    spec: ModelSpec
    contact_root: str | None = None
    #: Longest physics step this part stays accurate with (e.g. a robot whose servos were tuned
    #: for 200 Hz); a slot holding it is stepped in equal substeps no longer than this.
    max_dt: float | None = None
    #: Whether something draws the part from the first step (a robot's camera sensor): a world
    #: that leaves the looks out of its physics models compiles the drawn model with the structure
    #: then, else at the first picture (a camera of the robot file that nothing draws costs nothing).
    draws: bool = False


def load_spec(path: str) -> ModelSpec:
    """The model file at ``path`` (MJCF ``.xml``, or URDF) as a :data:`ModelSpec` to build a part from.

    Raises:
        ValueError: MuJoCo cannot parse it (the message says why).
    """
    import mujoco  # the one place outside the MuJoCo backend's modules that parses a model file

    try:
        return mujoco.MjSpec.from_file(str(path))
    except Exception as exc:  # mujoco raises ValueError, or a generic error for a bad include
        raise ValueError(f'cannot load the model file {str(path)!r}: {exc}') from exc

