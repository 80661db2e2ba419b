"""InternUtopia's ``internutopia.core.robot.isaacsim.articulation``: ``IsaacsimArticulation``,
Isaac Sim's implementation of ``IArticulation`` (it loads a robot's USD into Isaac Sim's stage and
wraps the PhysX articulation).

Importable, so that extensions importing it (InternManip's ``FrankaRobotiq``) load; MuJoCo cannot
run it, so building it (``IsaacsimArticulation(...)``, ``IsaacsimArticulation.create(...)``) raises
a ``TypeError`` that names what works here: ``IArticulation.create(...)``
(``internutopia.core.robot.articulation``) inside a per-slot robot's ``__init__``, which returns
the robot's articulation in its slot, or the per-slot robot's ``self.articulation``.
"""

from __future__ import annotations

from typing import Any, NoReturn

#: What to use instead, said by every error of this module.
INSTEAD = ("inside a per-slot robot's __init__ use "
           'IArticulation.create(...) (from internutopia.core.robot.articulation import IArticulation), which returns '
           "the robot's articulation in its slot, or the robot's self.articulation (docs/extensions.md)")


def _unavailable(what: str) -> NoReturn:
    raise TypeError(f"{what} builds Isaac Sim's articulation of a robot's USD (IsaacsimArticulation), which MuJoCo "
                    f'cannot load: {INSTEAD}')


class IsaacsimArticulation:
    """Isaac Sim's articulation (see the module docstring): building it raises a ``TypeError``
    naming ``IArticulation.create``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _unavailable('IsaacsimArticulation(...)')

    @classmethod
    def create(cls, *args: Any, **kwargs: Any) -> NoReturn:
        """Isaac Sim loads ``usd_path`` into its stage here; see the module docstring."""
        _unavailable(f'{cls.__name__}.create(...)')


__all__ = ['IsaacsimArticulation']
