"""``H1LegActionControllerCfg``: a walking H1's leg actions, for training its walking policy."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class H1LegActionControllerCfg(ControllerCfg):
    """The 10 leg actions in [-1, 1] of a walking H1 whose ``walking_policy`` is ``'controller'``
    (see :mod:`internutopia_extension.robots.h1_locomotion.gait` for what they mean)."""

    name: str = 'leg_action'
    type: str = 'H1LegActionController'


__all__ = ['H1LegActionControllerCfg']
