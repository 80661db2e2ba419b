"""The runner: slots, episodes, entity groups, tasks and metrics around one physics world.

``runner.py`` holds the episode lifecycle and the step; ``actions.py`` parses actions before
anything moves; ``observations.py`` assembles per-slot dicts and slot-indexed arrays.
"""

from internutopia.core.runner.observations import split_rows
from internutopia.core.runner.runner import ArrayStep, Runner, SlotStatus

__all__ = ['ArrayStep', 'Runner', 'SlotStatus', 'split_rows']
