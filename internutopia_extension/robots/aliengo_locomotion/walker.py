"""The walking controller's runtime for all Aliengos of a pack: H1's walker with Aliengo's gait."""

from __future__ import annotations

from pathlib import Path

from internutopia_extension.robots.aliengo_locomotion import gait
from internutopia_extension.robots.aliengo_locomotion.model import FEET
from internutopia_extension.robots.h1_locomotion.walker import H1Walker

#: Where the policy this project trained lives (next to the script that trained it).
POLICY_PATH = Path(__file__).resolve().parent / 'policy' / 'aliengo_walk.onnx'


class AliengoWalker(H1Walker):
    """Trot clocks, commands and the 50 Hz policy tick of one Aliengo group (see :class:`H1Walker`)."""

    gait = gait
    feet = FEET


__all__ = ['POLICY_PATH', 'AliengoWalker']
