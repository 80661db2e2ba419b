"""The runner: slots, episodes, entity groups, tasks and metrics around one physics world.

``runner.py`` wires the collaborators and holds the episode lifecycle and the step; ``slots.py``
is the slot table (what each slot holds); ``groups.py`` the robot and object groups and the
world's packs; ``terms.py`` the task, reward and metric objects and the slots each serves;
``checks.py`` checks an episode's types and files before a reset changes anything;
``starts.py`` takes, loads, places and starts a reset's episodes, each slot's failure its own;
``failures.py`` counts an episode's tries and writes its failure record; ``guard.py`` lets one
call in at a time and holds Ctrl-C until the call is done;
``actions.py`` parses actions before anything moves; ``observations.py`` assembles per-slot dicts
and slot-indexed arrays; ``outcomes.py`` holds what a step produced and turns it into the contract's
per-slot lists; ``runners.py`` is what ``vec_env.Env`` talks to: one local runner here,
Ray actors in the adapter.
"""

from internutopia.core.runner.checks import check_episode, check_task_list
from internutopia.core.runner.observations import split_rows
from internutopia.core.runner.runner import ArrayStep, Runner
from internutopia.core.runner.runners import LocalRunners, RunnerSet
from internutopia.core.runner.slots import SlotStatus, SlotTable

#: InternUtopia's name of the runner class. ``env.runner`` is a subclass with InternUtopia's
#: members (``current_tasks`` and the like): :class:`internutopia.per_slot.runner.UpstreamRunner`.
SimulatorRunner = Runner

__all__ = ['ArrayStep', 'LocalRunners', 'Runner', 'RunnerSet', 'SimulatorRunner', 'SlotStatus', 'SlotTable', 'check_episode',
           'check_task_list', 'split_rows']
