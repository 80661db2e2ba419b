"""The walking controller's runtime for all GR1s of a pack: H1's walker with GR1's gait.

:data:`POLICY_PATH` is the walking policy this project trained for GR1 (``walking_policy='default'``;
its run, figures and trainer: ``policy/run/`` and docs/training.md, "GR1"); a GR1 with
``walking_policy='controller'`` takes its leg actions from a training loop
(:attr:`~internutopia_extension.robots.h1_locomotion.walker.H1Walker.pending_action`).
"""

from __future__ import annotations

from pathlib import Path

from internutopia_extension.robots.gr1_locomotion import gait
from internutopia_extension.robots.gr1_model import FEET
from internutopia_extension.robots.h1_locomotion.walker import H1Walker
from internutopia_extension.robots.stand_hold import StandHoldSpec

#: The walking policy this project trained for GR1 (its training run beside it, in ``policy/run/``).
POLICY_PATH = Path(__file__).resolve().parent / 'policy' / 'gr1_walk.onnx'


class GR1Walker(H1Walker):
    """Gait clocks, commands and the 50 Hz policy tick of one GR1 group (see :class:`H1Walker`)."""

    gait = gait
    feet = FEET
    #: GR1's policy steps in place when told to stand and creeps about 5 mm/s; the walker holds the
    #: spot it stopped at (docs/robots.md, "GR1").
    stand_hold_spec = StandHoldSpec()


__all__ = ['POLICY_PATH', 'GR1Walker']
