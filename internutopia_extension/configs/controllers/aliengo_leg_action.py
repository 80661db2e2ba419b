"""``AliengoLegActionControllerCfg``: a walking Aliengo's leg actions, for training its walking policy."""

from __future__ import annotations

from internutopia.core.config import ControllerCfg


class AliengoLegActionControllerCfg(ControllerCfg):
    """The 12 leg actions in [-1, 1] of an Aliengo whose ``walking_policy`` is ``'controller'``
    (see :mod:`internutopia_extension.robots.aliengo_locomotion.gait` for what they mean)."""

    name: str = 'leg_action'
    type: str = 'AliengoLegActionController'


__all__ = ['AliengoLegActionControllerCfg']
