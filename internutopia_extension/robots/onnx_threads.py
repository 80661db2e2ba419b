"""The onnxruntime session options of a walking policy's network: one or two intra-op threads.

A walking policy runs its network once per 50 Hz tick on the rows of every robot it drives. From
:data:`TWO_THREADS_FROM` rows on, two threads finish a call sooner than one (measured on a 2-core
host: H1's network on 128 rows 511 -> 305 us, on 32 rows 157 -> 132 us; on 2 rows one thread is
faster, 35 against 46 us). The threads spin between the layers of one call (a sleeping thread
wakes too slowly for layers this small) but not after it: the physics threads need the cores
until the next tick.

The walking policies import ONNX Runtime through :func:`load_onnxruntime`, which, the first time
it loads in a process, notes it for the env's memory estimate (:data:`ONNX_RUNTIME_BYTES`, with
:func:`~internutopia.core.util.memory.note_runtime_loaded`).

>>> options, threads = policy_session_options(rows=128)
>>> threads == (2 if (os.cpu_count() or 1) > 1 else 1), policy_session_options(rows=4)[1]
(True, 1)
"""

from __future__ import annotations

import numbers
import os
import sys
from typing import Any

from internutopia.core.util.memory import note_runtime_loaded

__all__ = ['ONNX_RUNTIME_BYTES', 'TWO_THREADS_FROM', 'load_onnxruntime', 'policy_session_options']

#: Rows per call (robots, or twice the robots for a policy run with its mirror image) from which
#: the network runs on two intra-op threads by default.
TWO_THREADS_FROM = 32
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


def policy_session_options(rows: int, intra_op_threads: int | None = None) -> tuple[Any, int]:
    """``(onnxruntime.SessionOptions, threads)`` for a network called on ``rows`` rows at a time:
    ``intra_op_threads`` when given (>= 1), else 2 from :data:`TWO_THREADS_FROM` rows on a machine
    with more than one core, else 1."""
    onnxruntime = load_onnxruntime()

    if intra_op_threads is None:
        intra_op_threads = 2 if rows >= TWO_THREADS_FROM and (os.cpu_count() or 1) > 1 else 1
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
