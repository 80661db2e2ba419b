"""The onnxruntime session options of a walking policy's network: one intra-op thread unless asked.

A walking policy runs its network once per 50 Hz tick on the rows of every robot it drives. On one
thread, ONNX Runtime's CPU kernels give a row the same output whatever else is in the call, so a
robot's actions depend on its own observations alone: the same episode walks the same, bit for
bit, at any ``env_num``, in any slot, in one process or split over Ray workers. On two threads the
kernels split a call's work by its size, and for some row counts (27-39 and 62 of H1's network,
measured) a row's output moves by a float32 ulp (1.8e-7) with the rows beside it: a walking H1
then drifted 4e-9 m from its one-slot run in the first step at 16 slots and a chaotic gait grows
that. What two threads gain is small on the project's 2-core hosts (H1's network on 128 rows 224
-> 203 us on an Intel Xeon, 243 -> 135 us on an AMD EPYC, once per four to five physics steps of
about 640 us; G1's on 64 rows 310 -> 312 us on the Xeon), so an env's walking robots run one
thread; a script that runs a policy itself can pass ``intra_op_threads=2`` to its constructor
(:class:`~internutopia_extension.robots.h1_locomotion.walker.OnnxPolicy`,
:class:`~internutopia_extension.robots.g1_locomotion.policy.G1LocomotionPolicy`), trading that
reproducibility for the speed. More than one thread spins between the layers of a call (a sleeping
thread wakes too slowly for layers this small) but not after it: the physics threads need the
cores until the next tick.

The walking policies import ONNX Runtime through :func:`load_onnxruntime`, which, the first time
it loads in a process, notes it for the env's memory estimate (:data:`ONNX_RUNTIME_BYTES`, with
:func:`~internutopia.core.util.memory.note_runtime_loaded`).

>>> policy_session_options()[1], policy_session_options(intra_op_threads=2)[1]
(1, 2)
"""

from __future__ import annotations

import numbers
import sys
from typing import Any

from internutopia.core.util.memory import note_runtime_loaded

__all__ = ['ONNX_RUNTIME_BYTES', 'load_onnxruntime', 'policy_session_options']

#: Resident bytes that importing ONNX Runtime and making its first session add to a process
#: (measured on Linux x86-64 with onnxruntime 1.32 and H1's network: 20 MB the import, 10 MB the
#: first session's thread pools and arenas).
ONNX_RUNTIME_BYTES = 30e6


def load_onnxruntime() -> Any:
    """The ``onnxruntime`` module, imported on first use (and noted for the env's memory estimate)."""
    if 'onnxruntime' not in sys.modules:
        note_runtime_loaded('ONNX Runtime', ONNX_RUNTIME_BYTES)
    import onnxruntime

    return onnxruntime


def policy_session_options(intra_op_threads: int = 1) -> tuple[Any, int]:
    """``(onnxruntime.SessionOptions, threads)`` for a walking policy's network on ``intra_op_threads``
    threads (an int >= 1; on one, a row's output never depends on the call's other rows)."""
    onnxruntime = load_onnxruntime()

    if isinstance(intra_op_threads, bool) or not isinstance(intra_op_threads, numbers.Integral) or intra_op_threads < 1:
        raise ValueError(f'intra_op_threads must be an int >= 1, got {intra_op_threads!r}')
    intra_op_threads = int(intra_op_threads)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    if intra_op_threads > 1:
        options.add_session_config_entry('session.intra_op.allow_spinning', '1')
        options.add_session_config_entry('session.force_spinning_stop', '1')
    return options, intra_op_threads
