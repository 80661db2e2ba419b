"""InternUtopia's per-instance sensor methods, mixed into :class:`~internutopia.core.sensor.base.BaseSensor`.

A sensor object built InternUtopia's way, ``cls(config, robot, scene)``, is one slot's sensor
(see :mod:`internutopia.core.sensor.slot`); these are its methods.
"""

from __future__ import annotations

from typing import Any

from internutopia.core.util.slot_instances import OrderedObsMixin


class SlotSensorMixin(OrderedObsMixin):
    """One slot's sensor: ``get_data()`` is what ``obs[robot]['sensors'][name]`` shows."""

    # Attributes of one slot's sensor (set by _init_slot), as InternUtopia's sensors have them.
    name: str
    config: Any
    obs_keys: list[str]

    def _init_slot(self, config: Any, robot: Any, scene: Any) -> None:
        if config.name is None:
            raise ValueError('must specify sensor name.')
        self.name = config.name
        self.config = config
        self._scene = scene
        self._robot = robot
        self.robot = robot
        self.obs_keys: list[str] = []

    def get_data(self) -> Any:
        """This slot's reading (upstream-style sensors define it)."""
        raise NotImplementedError(f'{type(self).__name__}.get_data is not implemented')

    def post_reset(self) -> None:
        """Called once the episode's start state is in place."""

    def restore_sensor_info(self) -> None:
        """Nothing to restore: resetting one slot leaves every other slot's state as it was."""

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced."""


__all__ = ['SlotSensorMixin']
