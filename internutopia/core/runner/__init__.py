"""The runner: slots, episodes, entity groups, tasks and metrics around one physics world.

``runner.py`` holds the episode lifecycle and the step; ``checks.py`` checks an episode's types
and files before a reset changes anything; ``actions.py`` parses actions before anything moves;
``observations.py`` assembles per-slot dicts and slot-indexed arrays;
``runners.py`` is what ``vec_env.Env`` talks to: one local runner here, Ray actors in the adapter.
"""

from internutopia.core.runner.checks import check_episode, check_task_list
from internutopia.core.runner.observations import split_rows
from internutopia.core.runner.runner import ArrayStep, Runner, SlotStatus
from internutopia.core.runner.runners import LocalRunners, RunnerSet

#: InternUtopia's name of the runner (``env.runner``); see :mod:`internutopia.core.runner.upstream`.
SimulatorRunner = Runner

__all__ = ['ArrayStep', 'LocalRunners', 'Runner', 'RunnerSet', 'SimulatorRunner', 'SlotStatus', 'check_episode',
           'check_task_list', 'split_rows']
