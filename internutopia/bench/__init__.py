"""Benchmark: env-steps per second of ``vec_env.Env.step``, as ratios measured side by side.

For each case (H1 following a path, G1 walking with its policy, the jetbot, ...) and each
``env_num``, one run measures, on the same machine and the same robot models:

- **ours**: ``vec_env.Env.step`` through the dict API of the contract and through the array API
  (``step_arrays``), with cameras off and on;
- **limit**: the physics alone: the same models stepped by raw ``mujoco.batch.Batch`` calls,
  replaying the controls ours applied (:class:`internutopia.limit.PhysicsLimit`);
- **async**: ``gymnasium.vector.AsyncVectorEnv`` over ``env_num`` single-robot envs doing the same
  control, one process each, as a Python loop over envs does;

and prints ``ours / limit`` and ``ours / async``, the cost of resetting one slot (same structure,
and a new structure) in units of one step, the start-up time to the first observation, and the
peak memory of the process running ours and of the pool's whole process tree.

**Safe to run.** A pool is planned from its measured per-worker footprint and the memory free
(cgroup-aware) before it starts, and runs whole, scaled down or not at all, as the output and
the JSON say (:mod:`~internutopia.bench.memory`, :mod:`~internutopia.bench.baseline`). No process
it starts outlives it, whatever ends it (:mod:`~internutopia.bench.processes`).

**The method** (:mod:`internutopia.bench.paired`). Each run is a fresh process. After a warm-up,
its timed steps are cut into chunks of ``--chunk`` steps (20). Each chunk makes one pair: ours
steps it (the controls it applies are recorded after each step, outside our time), then the limit
replays the same chunk from the same start state. The pair's ratio is limit time / our time, so
both halves of a pair ran within milliseconds of each other on nearly the same machine. Steps
during which the kernel preempted a thread of the process (on either side) are left out of their
pair, and pairs with too few steps left out of the run, when enough others ran undisturbed. A run reports the median of its pair ratios and their interquartile range (IQR). ``--repeat N`` runs
each case N times, each in a fresh process, and reports the median of the N run medians with
their min and max. Read a row as: the median is the figure; the IQR says how steady the machine
was during the run (a wide IQR, or a median that moves between runs, means a busy machine).

**Layout.** :mod:`~internutopia.bench.cases` (the registry of cases and camera settings),
:mod:`~internutopia.bench.paired` (the paired timing), :mod:`~internutopia.bench.ours` (one run in a
fresh process: timing, start-up, memory, resets), :mod:`~internutopia.bench.alternative`
(AsyncVectorEnv), :mod:`~internutopia.bench.pool` (its workers, which die with the benchmark),
:mod:`~internutopia.bench.report` (rows, text and Markdown), :mod:`~internutopia.bench.plots`
(plots from a run's JSON),
:mod:`~internutopia.bench.command` (the driver and ``main``), :mod:`~internutopia.bench.profile_step`
(the Python of a step alone, physics off, with an optional profile).

**Other measurements**, each its own command (``python -m internutopia.bench.NAME --help``):
:mod:`~internutopia.bench.distributed` (Ray runners against one process),
:mod:`~internutopia.bench.reset_cost` (resetting one slot: same structure against a rebuild),
:mod:`~internutopia.bench.franka_ik` (the Franka's batched IK against ``mink``),
:mod:`~internutopia.bench.staggered` (a walking robot's step with slots started at different times) and
:mod:`~internutopia.bench.step_instructions` (instructions per step, counted by valgrind's callgrind).

**Adding a case** (a robot, task or control): register it in ``internutopia/bench/cases.py``
with ``register_case(robot_case(...))`` for a robot following a path, or ``register_case(Case(...))``
with your own ``config(env_num, cameras)``, ``dict_actions(env_num)`` and ``array_action(env_num)``.
It is then selected by ``--robots NAME``, and part of the default run unless ``default=False``.
A camera setting is ``register_camera(name, sensors)`` in the same module (``--cameras NAME``).

Run ``python -m internutopia.bench --help`` (or ``internutopia bench``). ``--json`` prints every
figure as one JSON object on the last line; ``--markdown`` prints the rows as the table of
``docs/performance.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from internutopia.bench.cases import CAMERAS, CASES, Case, register_camera, register_case, robot_case
    from internutopia.bench.command import main, run

__all__ = ['CAMERAS', 'CASES', 'Case', 'main', 'register_camera', 'register_case', 'robot_case', 'run']

# Where each name above lives. They are imported on first use, not with the package: the cases
# import every robot of the extension package, which a tool of this package that needs none of them
# (``python -m internutopia.bench.step_instructions`` starting its child under valgrind, where the
# imports run ten times slower) should not pay for.
_HOMES = {'CAMERAS': 'cases', 'CASES': 'cases', 'Case': 'cases', 'register_camera': 'cases', 'register_case': 'cases',
          'robot_case': 'cases', 'main': 'command', 'run': 'command'}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    return getattr(importlib.import_module(f'{__name__}.{_HOMES[name]}'), name)
