"""What handing a step's results over as torch or Warp arrays costs, beside numpy.

``env.step_arrays(action, array_backend=...)`` computes the results in numpy on the host on every
backend, then hands them over: on the CPU as views sharing the numpy arrays' memory, on a GPU
(``SimConfig(backend='warp', device='cuda:N')``) as one host-to-device copy per array
(docs/backend.md, "Arrays on the device"). This tool times the same case's step through each
``array_backend`` in alternating chunks (numpy, torch, warp, numpy, ...), so the three see nearly
the same machine, and prints each one's median time a step and its difference from numpy's.
It also checks what a user receives: the arrays' type and device. On a GPU it times the hand-over
of one step's results to torch alone, too (one host-to-device copy per array): a GPU step is long
and varies by more than the hand-over from one chunk to the next.

Run it as ``python -m internutopia.bench.array_handover --robots jetbot --env-nums 1024 --backend
warp --device cuda:0`` (any case of ``python -m internutopia.bench --help``; ``--backend`` and
``--device`` as there). ``array_backend``\\ s whose package is missing are left out.

>>> summarize_handover({'numpy': [1e-3, 2e-3, 3e-3], 'torch': [1.5e-3, 2.5e-3, 3.5e-3]})['torch']
{'us_per_step': 2500.0, 'us_over_numpy': 500.0}
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from typing import Any

import numpy as np

from internutopia.bench import options
from internutopia.core.backend.arrays import ARRAY_BACKENDS
from internutopia.core.env_results import STEP_ARRAYS, convert_step

__all__ = ['available_array_backends', 'measure_handover', 'summarize_handover', 'time_results_handover']


def available_array_backends() -> list[str]:
    """The ``array_backend`` values whose package imports here (numpy always)."""
    return [name for name in ARRAY_BACKENDS if name == 'numpy' or importlib.util.find_spec(name) is not None]


def summarize_handover(seconds: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Median microseconds a step per array backend, and each one's difference from numpy's
    (``seconds[name]``: one entry a chunk, seconds a step)."""
    medians = {name: float(np.median(values)) * 1e6 for name, values in seconds.items()}
    return {name: {'us_per_step': round(value, 1), 'us_over_numpy': round(value - medians['numpy'], 1)}
            for name, value in medians.items()}


def time_results_handover(results: Any, device: str, reps: int = 200) -> dict[str, Any]:
    """Median microseconds to hand one step's results (numpy, as ``step_arrays`` computes them)
    over as torch tensors on ``device``, alone: what ``array_backend='torch'`` adds to a step
    (:func:`~internutopia.core.env_results.convert_step`, which ``step_arrays`` calls)."""
    tree = [results.obs, *(getattr(results, name) for name in STEP_ARRAYS)]
    arrays = [array for array in _leaves(tree) if isinstance(array, np.ndarray)]
    seconds = []
    for _ in range(reps):
        began = time.perf_counter()
        convert_step(results, 'torch', device)  # (a copy from pageable host memory returns once it is done)
        seconds.append(time.perf_counter() - began)
    return {'arrays': len(arrays), 'bytes': int(sum(array.nbytes for array in arrays)),
            'us': round(float(np.median(seconds)) * 1e6, 1)}


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in _leaves(value)]
    if isinstance(tree, list):
        return [leaf for value in tree for leaf in _leaves(value)]
    return [tree]


def _first_array(tree: Any) -> Any:
    while isinstance(tree, dict):
        tree = next(iter(tree.values()))
    return tree


def _describe(out: Any) -> str:
    """Type and device of a step's first observation array and of its reward."""
    first = _first_array(out.obs)

    def one(array: Any) -> str:
        device = getattr(array, 'device', 'cpu')  # (numpy's arrays say so from 2.0 on; 1.x's are on the CPU too)
        return f'{type(array).__module__.split(".")[0]}.{type(array).__name__} on {device}'

    return f'observation {one(first)}, reward {one(out.reward)}'


def measure_handover(robot: str, env_num: int, backend: str | None, device: str | None,
                     chunks: int, chunk: int, warm_steps: int = 20) -> dict[str, Any]:
    """Time ``robot``'s case at ``env_num`` slots through each available ``array_backend``,
    ``chunks`` rounds of ``chunk`` steps each."""
    from internutopia.bench.cases import get_case
    from internutopia.core.vec_env import Env

    case = get_case(robot)
    config = case.config(env_num, 'off')
    if backend is not None:
        config = config.model_copy(update={'simulator': config.simulator.model_copy(update={'backend': backend, 'device': device})})
    action = case.array_action(env_num)
    names = available_array_backends()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    received: dict[str, str] = {}
    results_alone: dict[str, Any] | None = None
    started = time.perf_counter()
    with Env(config) as env:
        env.reset()
        start_up = time.perf_counter() - started
        for name in names:  # each hand-over's first call (a Warp array's first allocation, CUDA's context)
            for _ in range(max(1, warm_steps // len(names))):
                out = env.step_arrays(action, array_backend=name)
            received[name] = _describe(out)
        for _ in range(chunks):
            for name in names:
                began = time.perf_counter()
                for _ in range(chunk):
                    env.step_arrays(action, array_backend=name)
                seconds[name].append((time.perf_counter() - began) / chunk)
        array_device = str(env.array_device)
        if 'torch' in names and array_device != 'cpu':
            results_alone = time_results_handover(env.step_arrays(action), array_device)
    return {'robot': robot, 'env_num': env_num, 'backend': config.simulator.backend, 'device': array_device,
            'chunks': chunks, 'chunk': chunk, 'start_up_s': round(start_up, 1), 'received': received,
            'per_backend': summarize_handover(seconds), 'results_alone': results_alone}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.array_handover', description=__doc__.split('\n\n')[0])
    options.add_case_options(parser, robots='jetbot', env_nums='64')
    parser.add_argument('--backend', choices=('mujoco', 'warp'), default=None, help="physics backend (default: the case's own)")
    parser.add_argument('--device', default=None, help="the Warp backend's device: 'cpu', 'cuda' or 'cuda:N'")
    parser.add_argument('--chunks', type=int, default=20, help='rounds of alternating chunks (default 20)')
    parser.add_argument('--chunk', type=int, default=10, help='steps per chunk (default 10)')
    parser.add_argument('--json', action='store_true', help='print one JSON object per row')
    args = parser.parse_args(argv)
    from internutopia.bench.cases import CASES

    robots, env_nums = options.checked_cases(parser, args, CASES)
    options.at_least(parser, '--chunks', args.chunks)
    options.at_least(parser, '--chunk', args.chunk)
    for robot in robots:
        for env_num in env_nums:
            row = measure_handover(robot, env_num, args.backend, args.device, args.chunks, args.chunk)
            if args.json:
                print(json.dumps(row), flush=True)
                continue
            print(f"{robot} x{env_num} on {row['backend']} ({row['device']}), start-up {row['start_up_s']} s", flush=True)
            for name, figures in row['per_backend'].items():
                print(f"  {name:6s} {figures['us_per_step']:10.1f} us a step  ({figures['us_over_numpy']:+.1f} over numpy)"
                      f"  {row['received'][name]}", flush=True)
            alone = row['results_alone']
            if alone is not None:
                print(f"  one step's results alone ({alone['arrays']} arrays, {alone['bytes']} bytes) as torch on {row['device']}:"
                      f" {alone['us']} us", flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
