"""Loading Warp and MuJoCo Warp, and picking the device a world runs on.

Warp compiles its kernels on first use (about a minute per model structure on the CPU device)
and keeps them in its kernel cache: ``WARP_CACHE_PATH`` where set, else Warp's own per-user cache
folder. Keeping that folder between runs (CI does) makes every later start a matter of seconds.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ['INSTALL_HINT', 'load_engine', 'resolve_device']

#: What to install for this backend (named by every error about a missing engine).
INSTALL_HINT = "pip install 'internutopia[warp]' (mujoco-warp and warp-lang; Python >= 3.11)"
_DEVICE = re.compile(r'^(cpu|cuda(:\d+)?)$')


def load_engine() -> tuple[Any, Any]:
    """The ``warp`` and ``mujoco_warp`` modules, Warp initialized.

    Raises:
        RuntimeError: they are not installed (the message names the extra to install).
    """
    try:
        import mujoco_warp
        import warp
    except ImportError as exc:
        raise RuntimeError(f"SimConfig(backend='warp') needs MuJoCo Warp, which is not installed here ({exc}); "
                           f'install it with {INSTALL_HINT}') from exc
    # No banner and no line per compiled module (a step's first call compiles ~100 of them).
    warp.config.quiet = True
    warp.config.log_level = max(warp.config.log_level, warp.LOG_WARNING)
    warp.init()
    return warp, mujoco_warp


def resolve_device(warp: Any, name: str | None) -> str:
    """The Warp device for ``SimConfig.device`` ``name``: ``'cpu'``, ``'cuda'`` (the first GPU) or
    ``'cuda:N'``; ``None`` picks the first GPU where there is one, else the CPU.

    Raises:
        ValueError: the name is not one of those, or names a GPU this machine does not have.
    """
    cuda = warp.get_cuda_device_count()
    if name is None:
        return 'cuda:0' if cuda else 'cpu'
    if not _DEVICE.match(name):
        raise ValueError(f"SimConfig.device must be 'cpu', 'cuda' or 'cuda:N'; got {name!r}")
    if name == 'cuda':
        name = 'cuda:0'
    if name.startswith('cuda') and int(name.split(':')[1]) >= cuda:
        available = ['cpu'] + [f'cuda:{i}' for i in range(cuda)]
        raise ValueError(f'SimConfig.device={name!r}: this machine has no such device; Warp sees {available}')
    return name
