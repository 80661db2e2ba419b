"""``GR1LegActionControllerCfg``: a walking GR1's leg actions, for training its walking policy."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class GR1LegActionControllerCfg(ControllerCfg):
    """The 12 leg actions in [-1, 1] of a GR1 whose ``walking_policy`` is ``'controller'``
    (see :mod:`internutopia_extension.robots.gr1_locomotion.gait` for what they mean)."""

    name: str = 'leg_action'
    type: str = 'GR1LegActionController'


__all__ = ['GR1LegActionControllerCfg']
