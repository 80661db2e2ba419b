"""Open a recording with LeRobot's own ``LeRobotDataset``, offline.

``lerobot`` 0.4.4 (the last release for Python 3.11) is installed without its declared
dependencies (they pin torch < 2.11 and pull a CUDA torch; ``docs/datasets.md`` lists what to
install). Its dataset code imports ``torchvision``, and PyPI's torchvision wheel is a CUDA build:
over our CPU torch its compiled operators do not load, and its import stops at the first fake
kernel it registers for one of them (``operator torchvision::nms does not exist``). LeRobot's
datasets use none of those operators, so :func:`import_torchvision` declares the two operator
schemas torchvision's import refers to (without kernels: calling them still fails) and imports it.
Videos are decoded by ``torchcodec``, which needs FFmpeg's shared libraries (Debian:
``libavcodec59 libavformat59 libavutil57 libswscale6 libswresample4 libavdevice59 libavfilter8``).
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
from typing import Any

from internutopia.core.extras import import_failure

__all__ = ['import_torchvision', 'open_lerobot_dataset']

#: The operators torchvision's import registers fake kernels for before its own library loads.
_TORCHVISION_SCHEMAS = ('nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor',
                        'qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor')
_declared: list[Any] = []  # the torch.library.Library holding the schemas (kept alive)

INSTALL_HINT = ("pip install --no-deps lerobot==0.4.4 datasets==4.8.5 huggingface-hub==0.35.3 pandas==3.1.1 "
                "accelerate==1.15.0 torchvision==0.28.0 torchcodec==0.13.0 multiprocess==0.70.19 dill==0.4.1 "
                "xxhash==4.1.0 safetensors==0.8.0 httpx==0.28.1 anyio==4.16.0 h11==0.16.0 httpcore==1.0.9 "
                "(docs/datasets.md: FFmpeg's shared libraries too)")


def import_torchvision() -> Any:
    """``torchvision``, imported even where its compiled operators cannot load (see the module doc)."""
    try:
        import torchvision
    except RuntimeError as exc:
        if 'torchvision::' not in str(exc):
            raise
        import torch

        for name in [m for m in sys.modules if m == 'torchvision' or m.startswith('torchvision.')]:
            del sys.modules[name]
        library = torch.library.Library('torchvision', 'DEF')
        for schema in _TORCHVISION_SCHEMAS:
            library.define(schema)
        _declared.append(library)
        import torchvision
    return torchvision


def open_lerobot_dataset(root: str | os.PathLike, repo_id: str = 'local/recording', **kwargs: Any) -> Any:
    """``lerobot.datasets.lerobot_dataset.LeRobotDataset(repo_id, root=root, **kwargs)``, offline.

    Only the episodes ``meta/info.json`` counts are read: the files a recording killed between an
    episode's files and ``info.json`` left at later indices are left out (LeRobot's own reader would
    load their rows: they are passed as ``episodes=range(total_episodes)`` and dropped from
    ``meta.episodes``).

    Raises:
        FileNotFoundError: ``root`` holds no dataset (no ``meta/info.json``).
        ValueError: the dataset has no saved episode (LeRobot cannot open an empty dataset).
        ImportError: ``lerobot`` (or what its dataset code imports) is not installed.
    """
    root = os.fspath(root)
    try:
        with open(os.path.join(root, 'meta', 'info.json')) as f:
            info = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f'{root!r} holds no dataset: there is no meta/info.json (the recording never '
                                'recorded a step)') from None
    total = int(info.get('total_episodes') or 0)
    if total == 0:
        raise ValueError(f'{root!r} holds no saved episode (meta/info.json: total_episodes 0): the recording ended '
                         'before any episode was saved (every one was abandoned, failed, without success or '
                         'skipped), and LeRobot cannot open a dataset without episodes')
    os.environ.setdefault('HF_HUB_OFFLINE', '1')  # a local folder: never ask the Hub
    try:
        import_torchvision()
        from lerobot.datasets.lerobot_dataset import LeRobotDataset
    except ImportError as exc:
        raise import_failure("reading a recording with LeRobot needs lerobot and its dataset code's imports", exc,
                             INSTALL_HINT) from None
    uncounted = _uncounted_files(root, total, int(info.get('chunks_size') or 1000))
    if uncounted and kwargs.get('episodes') is None:
        kwargs['episodes'] = list(range(total))
    dataset = LeRobotDataset(repo_id, root=root, **kwargs)
    if uncounted:
        episodes = dataset.meta.episodes
        keep = [i for i, index in enumerate(episodes['episode_index']) if int(index) < total]
        if len(keep) != len(episodes):
            dataset.meta.episodes = episodes.select(keep)
    return dataset


def _uncounted_files(root: str, total: int, chunks_size: int) -> list[str]:
    """The episode files of ``root`` at episode indices ``total`` and up (not counted in ``info.json``)."""
    found = []
    pattern = re.compile(r'chunk-(\d+)[/\\]file-(\d+)\.(parquet|mp4)$')
    for path in glob.glob(os.path.join(root, 'data', '*', '*.parquet')) + glob.glob(
            os.path.join(root, 'meta', 'episodes', '*', '*.parquet')):
        match = pattern.search(path)
        if match and int(match.group(1)) * chunks_size + int(match.group(2)) >= total:
            found.append(path)
    return found
