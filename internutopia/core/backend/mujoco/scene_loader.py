"""Scene specs for a slot: a USD or MJCF file, or a flat ground when no scene is given."""

from __future__ import annotations

from collections.abc import Sequence

import mujoco


def scene_to_spec(path: str | None, scale: Sequence[float] = (1.0, 1.0, 1.0), position: Sequence[float] = (0.0, 0.0, 0.0),
                  orientation_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0)) -> mujoco.MjSpec:
    """Load the scene at ``path`` (``.usd``/``.usda``/``.usdc``/``.xml``), or a ground plane for ``None``."""
    from internutopia.core.backend.mujoco import usd_scene

    return usd_scene.scene_to_spec(path, scale, position, orientation_wxyz)
