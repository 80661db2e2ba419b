"""The bodies InternUtopia's robot classes look up by prim path in their ``post_reset``.

InternUtopia's H1, G1, GR1 and Aliengo each fetch a few rigid bodies from ``_rigid_body_map``
(``<robot prim>/<body>``) when an episode starts and keep them as attributes (``_robot_base``,
an IMU, the ankles) that their methods and subclasses read. A built-in robot here names them in
``upstream_bodies`` on its ``upstream_methods`` class (what a slot's robot gets beyond the common
robot API, :mod:`internutopia.per_slot.robot`); :class:`UpstreamBodies` looks them up the same way.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ['UpstreamBodies']


class UpstreamBodies:
    """Sets each attribute of :attr:`upstream_bodies` to its body at ``post_reset``; gives
    ``get_robot_base()`` (``_robot_base``) and a ``set_gains()`` that has nothing to do (the servo
    gains are set when the model is built)."""

    #: ``{attribute: body name under the robot's prim}`` (``_robot_base`` among them).
    upstream_bodies: ClassVar[dict[str, str]] = {}

    config: Any
    name: str
    _rigid_body_map: dict[str, Any]
    _robot_base: Any

    def post_reset(self) -> None:
        root = (self.config.prim_path or f'/{self.name}').rstrip('/')
        for attribute, body in self.upstream_bodies.items():
            setattr(self, attribute, self._rigid_body_map[f'{root}/{body}'])
        super().post_reset()  # type: ignore[misc]

    def get_robot_base(self) -> Any:
        """The base's rigid body, as InternUtopia's robot gives it."""
        return self._robot_base

    def set_gains(self) -> None:
        """The servo gains are set when the model is built; nothing to do."""
