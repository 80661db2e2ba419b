"""The walking controller's runtime for all GR1s of a pack: H1's walker with GR1's gait.

No GR1 policy is trained yet, so :data:`POLICY_PATH` does not exist; a GR1 on its walking model
with ``walking_policy='controller'`` takes its leg actions from a training loop
(:attr:`~internutopia_extension.robots.h1_locomotion.walker.H1Walker.pending_action`).
"""

from __future__ import annotations

from pathlib import Path

from internutopia_extension.robots.gr1_locomotion import gait
from internutopia_extension.robots.gr1_model import FEET
from internutopia_extension.robots.h1_locomotion.walker import H1Walker

#: Where a policy this project trains for GR1 will live (next to its training figures).
POLICY_PATH = Path(__file__).resolve().parent / 'policy' / 'gr1_walk.onnx'


class GR1Walker(H1Walker):
    """Gait clocks, commands and the 50 Hz policy tick of one GR1 group (see :class:`H1Walker`)."""

    gait = gait
    feet = FEET


__all__ = ['POLICY_PATH', 'GR1Walker']
