"""The array library the array API hands its results in: numpy, torch or Warp, on the backend's device.

Two kinds of arrays reach a user, and they travel differently:

- **Results of a step** (observations, rewards, flags): robots, tasks and rewards compute them on
  the host in numpy on every backend. :func:`convert_tree` hands them over as torch tensors
  (``torch.from_numpy``) or Warp arrays (``warp.array(..., copy=False)``) that share the numpy
  arrays' memory on the CPU; on a GPU device each array is copied once, host to device.
- **The physics state** (:func:`state_views`): on the Warp backend it lives in the device's
  ``Data``; torch tensors are ``warp.to_torch`` views of it and Warp arrays are the device arrays
  themselves: no copy, on the CPU device or a GPU. On the MuJoCo backend it lives in host numpy
  arrays, and the views share that memory.

Torch and Warp are imported on first use only (the ``train`` and ``warp`` extras).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ['ARRAY_BACKENDS', 'DEVICE_STATE_FIELDS', 'PackArrays', 'array_device', 'check_array_backend', 'convert_tree',
           'pack_states', 'state_views']

#: What ``array_backend=`` accepts.
ARRAY_BACKENDS = ('numpy', 'torch', 'warp')
#: The state fields :func:`state_views` serves (``time`` stays on the host: the Warp backend keeps
#: it in float64 there, its device copy is float32).
DEVICE_STATE_FIELDS = ('qpos', 'qvel', 'act', 'ctrl', 'qfrc_applied', 'xfrc_applied', 'mocap_pos', 'mocap_quat', 'sensordata')
_INSTALL = {'torch': "pip install 'internutopia[train]' (torch)", 'warp': "pip install 'internutopia[warp]' (warp-lang)"}


def check_array_backend(name: Any) -> str:
    """``name`` if it is one of :data:`ARRAY_BACKENDS` and its library is installed.

    Raises:
        ValueError: ``name`` is not one of them (the message names the valid ones).
        RuntimeError: its library is not installed (the message names what to install).
    """
    if not isinstance(name, str) or name not in ARRAY_BACKENDS:
        raise ValueError(f'array_backend must be one of {list(ARRAY_BACKENDS)}; got {name!r}')
    if name != 'numpy':
        try:
            _library(name)
        except ImportError as exc:
            raise RuntimeError(f'array_backend={name!r} needs {name}, which is not installed here ({exc}); '
                               f'install it with {_INSTALL[name]}') from exc
    return name


def array_device(sim: Any, world: Any = None) -> str:
    """The device a backend's arrays live on: the Warp world's (``'cpu'`` or ``'cuda:N'``), else ``'cpu'``.

    ``world`` is the local world where there is one; without it (a Ray-distributed env) the device
    comes from ``sim.device``, the first GPU when that is ``None`` and one exists.
    """
    device = getattr(world, 'device', None)
    if isinstance(device, str):
        return device
    if getattr(sim, 'backend', 'mujoco') != 'warp':
        return 'cpu'
    if sim.device is not None:
        return 'cuda:0' if sim.device == 'cuda' else str(sim.device)
    import warp

    return 'cuda:0' if warp.get_cuda_device_count() else 'cpu'


def convert_tree(tree: Any, array_backend: str, device: str) -> Any:
    """``tree`` (dicts, lists and tuples of numpy arrays and other leaves) with every numpy array
    in ``array_backend`` on ``device``: shared memory on the CPU, one host-to-device copy on a GPU.
    Other leaves are kept as they are; ``'numpy'`` returns ``tree`` itself."""
    if array_backend == 'numpy':
        return tree
    library = _library(array_backend)
    return _convert(tree, library, array_backend, device)


def state_views(pack: Any, fields: Sequence[str], array_backend: str) -> dict[str, Any]:
    """The physics state ``fields`` of ``pack`` (arrays of ``(env_num, ...)``, row ``i`` env slot ``i``)
    as views of where the state lives, no copy made.

    A pack whose state lives on a device provides ``device_arrays(fields)`` (Warp arrays; the Warp
    backend's pack): torch tensors are ``warp.to_torch`` views of them. Otherwise the host state
    arrays (``pack.data``) are viewed (``torch.from_numpy``, ``warp.array(copy=False)``).
    ``'numpy'`` gives the host state arrays on every backend.
    """
    unknown = [name for name in fields if name not in DEVICE_STATE_FIELDS]
    if unknown:
        raise ValueError(f'state fields {unknown} are not served; valid: {list(DEVICE_STATE_FIELDS)}')
    device_arrays = getattr(pack, 'device_arrays', None)
    if array_backend == 'numpy' or device_arrays is None:
        host = {name: getattr(pack.data, name) for name in fields}
        return convert_tree(host, array_backend, 'cpu')
    arrays = device_arrays(fields)
    if array_backend == 'warp':
        return dict(arrays)
    import warp

    return {name: warp.to_torch(array) for name, array in arrays.items()}


@dataclass(frozen=True)
class PackArrays:
    """The physics state of one pack (the slots of one structure), as :func:`pack_states` hands it out."""

    #: The structure key of the pack.
    key: str
    #: The env slots holding this structure, sorted: the rows of ``arrays`` that are theirs.
    slots: np.ndarray
    #: ``{field: (env_num, ...) array}``, row ``i`` env slot ``i`` (rows of other slots idle).
    arrays: dict[str, Any]


def pack_states(world: Any, env_num: int, fields: Sequence[str], array_backend: str) -> list[PackArrays]:
    """:func:`state_views` of every pack of ``world`` holding slots, in the order of their first slot."""
    packs: dict[int, Any] = {}
    for slot in range(env_num):
        pack = world.pack(slot)
        if pack is not None:
            packs.setdefault(id(pack), pack)
    return [PackArrays(pack.key, pack.slots.copy(), state_views(pack, fields, array_backend)) for pack in packs.values()]


def _library(array_backend: str) -> Any:
    if array_backend == 'torch':
        import torch

        return torch
    import warp

    return warp


def _convert(tree: Any, library: Any, array_backend: str, device: str) -> Any:
    if isinstance(tree, np.ndarray):
        return _to_torch(tree, library, device) if array_backend == 'torch' else _to_warp(tree, library, device)
    if isinstance(tree, Mapping):
        return {key: _convert(value, library, array_backend, device) for key, value in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_convert(value, library, array_backend, device) for value in tree)
    return tree


def _to_torch(array: np.ndarray, torch: Any, device: str) -> Any:
    tensor = torch.from_numpy(array if array.flags.writeable else array.copy())
    return tensor if device == 'cpu' else tensor.to(device)


def _to_warp(array: np.ndarray, warp: Any, device: str) -> Any:
    if array.dtype.kind not in 'biuf':
        raise TypeError(f'a {array.dtype} array has no Warp counterpart (array_backend="warp" takes numbers and flags)')
    dtype = warp.dtype_from_numpy(array.dtype)
    if device == 'cpu':  # a view, with the numpy strides as they are (the MuJoCo pack's state arrays are strided)
        return warp.array(array, dtype=dtype, device=device, copy=False)
    return warp.array(np.ascontiguousarray(array), dtype=dtype, device=device)
