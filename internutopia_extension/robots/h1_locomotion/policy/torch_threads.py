"""Torch threads for PPO beside the physics: one while the physics steps, more for the update.

The physics is idle while PPO updates, so the update may use the cores. But torch's OpenMP
threads spin while they wait for each other (``OMP_WAIT_POLICY`` defaults to active waiting), and
on a machine whose cores are busy with other work a spinning thread holds a core that the thread
it waits for needs: on the shared 2-core machine a 2-thread update took 7 to 15 times as long as a
one-thread one. With ``OMP_WAIT_POLICY=PASSIVE`` the waiting threads sleep, and the same 2-thread
update took about half the one-thread time (docs/performance.md, "Training throughput"). OpenMP
reads the variable once, when torch loads it: :func:`sleeping_openmp` must run before torch is
imported.
"""

from __future__ import annotations

import os
import sys

from internutopia.core.util.cpus import usable_cpus

__all__ = ['default_update_threads', 'sleeping_openmp']


def sleeping_openmp() -> bool:
    """Make OpenMP's waiting threads sleep (``OMP_WAIT_POLICY=PASSIVE``, unless the environment
    already chose a policy) and return whether they do: ``False`` when the environment chose
    another policy, or when torch was imported before without one (too late to choose)."""
    if 'torch' not in sys.modules:
        os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
    return os.environ.get('OMP_WAIT_POLICY', '').upper() == 'PASSIVE'


def default_update_threads() -> int:
    """The update's torch threads when none are asked for: the cores this process may use, at
    most 2 (the count measured to pay off on the 2-core machine)."""
    return max(1, min(2, usable_cpus()))
