"""Fourier GR1 T2 with two Inspire hands: the MuJoCo models, from the PyPI package ``fourier-robot-descriptions``.

The model is the package's ``gr1t2_inspire_hand.urdf`` (Apache-2.0, Fourier's description with
meshes), read at run time (never copied into this repository) and converted by MuJoCo's URDF
importer with its visual meshes kept. What this module adds to the URDF:

- a free joint ``root`` on ``base_link`` (the pelvis), so the robot stands on the floor;
- the URDF's ``mimic`` tags as MuJoCo joint equalities (the importer makes them): each finger's
  intermediate joint follows its proximal one, the thumb's distal joint its proximal pitch;
- the thumbs' intermediate joints fixed: InternUtopia's GR1 has 54 joints, 11 per hand, without
  them (its config lists them commented out), so here too;
- a position servo on each of the 54 joints, its force limited to the URDF's effort limit (the
  coupled finger joints' servos pull with no force: the hand's linkage, the equality, sets them);
- collision geoms (the URDF's primitives, in geom group 3, not drawn by default) that touch the
  scene but not each other (InternUtopia turns GR1's self-collisions off).

Two variants: :func:`walking_spec` keeps the physics honest (no gravity compensation, Fourier's
servo gains, the URDF's effort limits) and adds what a walking controller reads, as MuJoCo
sensors named like H1's walking model (``{left,right}_sole_touch``, ``_pos``, ``_vel`` on a
``{foot}_sole`` site under each foot); :func:`carried_spec` is the gliding statue of
``locomotion='carried'`` (gravity compensated, stiff standing-pose servos, the pelvis softly
welded to a mocap target).

>>> GR1_URDF
'gr1t2_inspire_hand.urdf'
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ElementTree
from importlib import resources
from pathlib import Path

import mujoco

from internutopia_extension.robots.carried_base import weld_to_mocap
from internutopia_extension.robots.sole_sensors import add_sole

#: The package the model comes from and the command that installs it (its declared dependencies,
#: pinocchio and git tooling, are not needed to read its files).
GR1_PACKAGE = 'fourier_robot_descriptions'
GR1_INSTALL = 'pip install --no-deps fourier-robot-descriptions'
GR1_URDF = 'gr1t2_inspire_hand.urdf'
#: The walking model's hands: held by their finger servos (GR1 as users drive it) or welded to the wrists (:func:`weld_hands`).
HANDS = ('servo', 'welded')
#: Name prefixes of the hands' joints (left, right Inspire hand).
HAND_JOINT_PREFIXES = ('L_', 'R_')
#: Joints of the URDF that InternUtopia's GR1 does not have (fixed here at 0).
FIXED_JOINTS = ('L_thumb_intermediate_joint', 'R_thumb_intermediate_joint')
FEET = ('left', 'right')
#: The body each sole site sits on, by foot.
FOOT_BODY = {'left': 'left_foot_roll_link', 'right': 'right_foot_roll_link'}
#: The sole site in the foot roll link: under the two sole cylinders of the URDF (0.24 m long along
#: x, centred 0.05 m ahead of the ankle, their bottom 0.055 m below it).
SOLE_SITE_POS = (0.05, 0.0, -0.055)
#: Half sizes of the box in which a touch sensor sums the sole's contact normal forces.
SOLE_SITE_SIZE = (0.13, 0.05, 0.03)

#: Servo gains (kp N m/rad, kd N m s/rad) of the walking model by joint-name substring, first match
#: wins: Fourier's gains for GR1 as InternUtopia sets them.
WALKING_GAINS: dict[str, tuple[float, float]] = {
    'hip_roll': (251.625, 14.72), 'hip_yaw': (362.52, 10.0833), 'hip_pitch': (200.0, 11.0), 'knee': (200.0, 11.0),
    'ankle': (10.9805, 0.6), 'waist': (350.0, 15.0), 'head': (112.06, 3.1), 'shoulder_pitch': (92.85, 2.575),
    'shoulder_roll': (92.85, 2.575), 'shoulder_yaw': (112.06, 3.1), 'elbow': (112.06, 3.1), 'wrist_yaw': (112.06, 3.1),
    'wrist': (10.0, 1.0),
}
#: The carried model's standing-pose servos (the body is weightless there: stiff and well damped).
CARRIED_GAINS: dict[str, tuple[float, float]] = {
    'hip': (300.0, 10.0), 'knee': (300.0, 10.0), 'ankle': (60.0, 2.0), 'waist': (300.0, 10.0), 'head': (50.0, 2.0),
    'shoulder': (60.0, 3.0), 'elbow': (60.0, 3.0), 'wrist': (20.0, 1.0),
}
#: Finger servos (the Inspire links weigh grams): gain, damping and armature as H1's Inspire hands
#: use them, stable at a 5 ms physics step (a driven joint's gain scaled by the joints it moves).
FINGER_KP, FINGER_DAMPING, FINGER_ARMATURE = 0.5, 0.05, 1e-3
#: Rotor inertia (kg m^2) given to the body joints: the URDF has none; a geared motor's reflected
#: inertia is of this order and it keeps the stiff servos stable at a 5 ms step.
BODY_ARMATURE = 0.01
#: Standing pose (rad), by joint (others 0): knees bent, arms a little out and forward, Fourier's
#: default pose of GR1 (the pose InternUtopia's GR1 policy acts around).
STANDING_POSE: dict[str, float] = {
    **{f'{side}_hip_pitch_joint': -0.2618 for side in FEET}, **{f'{side}_knee_pitch_joint': 0.5236 for side in FEET},
    **{f'{side}_ankle_pitch_joint': -0.2618 for side in FEET}, 'left_shoulder_roll_joint': 0.2,
    'right_shoulder_roll_joint': -0.2, **{f'{side}_elbow_pitch_joint': -0.3 for side in FEET},
}
#: Height (m) of ``base_link`` above the floor with the soles flat on it in :data:`STANDING_POSE`
#: (from the model's kinematics; ``tests/test_gr1.py`` checks it).
STANDING_HEIGHT = 0.898
#: Longest physics step of the walking model (s): its servos are stiff for the light wrists and ankles.
WALKING_PHYSICS_DT = 0.005
#: Sliding friction of the carried GR1's soles (the base glides; the feet must not drag the legs).
CARRIED_SOLE_FRICTION = 0.05


def gr1_urdf_path() -> Path:
    """The GR1 T2 URDF (with Inspire hands) of ``fourier-robot-descriptions``.

    Raises:
        ImportError: the package is not installed (naming the command that installs it).
    """
    try:
        root = resources.files(GR1_PACKAGE)
    except ModuleNotFoundError as exc:
        raise ImportError(f'GR1Robot needs the GR1 T2 model of fourier-robot-descriptions: {GR1_INSTALL}') from exc
    path = Path(str(root)) / 'assets' / 'urdf' / GR1_URDF
    if not path.is_file():
        raise FileNotFoundError(f'{path} is missing from {GR1_PACKAGE}; reinstall it ({GR1_INSTALL})')
    return path


def urdf_effort_limits(path: Path) -> dict[str, float]:
    """``{joint: effort limit}`` (N m) of the revolute joints of the URDF at ``path``."""
    limits = {}
    for joint in ElementTree.parse(path).getroot().iter('joint'):
        limit = joint.find('limit')
        if joint.get('type') == 'revolute' and limit is not None and limit.get('effort') is not None:
            limits[str(joint.get('name'))] = float(limit.get('effort', 0.0))
    return limits


@functools.cache
def _urdf_spec() -> tuple[mujoco.MjSpec, dict[str, float]]:
    path = gr1_urdf_path()
    text = path.read_text()
    # MuJoCo's URDF importer drops visual geoms, mesh folders and fixed links unless told otherwise:
    # the meshes are the robot's looks, and imu_link / torso_link are bodies InternUtopia looks up.
    options = (f'<mujoco><compiler discardvisual="false" strippath="false" fusestatic="false" '
               f'meshdir="{path.parent}"/></mujoco>')
    text, found = re.subn(r'(<robot\b[^>]*>)', r'\1' + options, text, count=1)
    if not found:
        raise ValueError(f'{path} has no <robot> element')
    return mujoco.MjSpec.from_string(text), urdf_effort_limits(path)


def _gains(joint: str, table: dict[str, tuple[float, float]]) -> tuple[float, float]:
    return next((gain for key, gain in table.items() if key in joint), (FINGER_KP, 0.0))


def gr1_base_spec(gains: dict[str, tuple[float, float]]) -> mujoco.MjSpec:
    """The URDF as described in the module docstring, its servos with ``gains`` (body joints)."""
    parsed, efforts = _urdf_spec()
    spec = parsed.copy()
    spec.body('base_link').add_freejoint(name='root')
    for name in FIXED_JOINTS:
        spec.delete(spec.joint(name))
    for equality in list(spec.equalities):
        if equality.name1 in FIXED_JOINTS or equality.name2 in FIXED_JOINTS:
            spec.delete(equality)
    for geom in spec.geoms:
        if geom.contype or geom.conaffinity:
            # Touches the scene (contype 1 there), not the robot's own geoms; drawn only on request
            # (group 3, as Menagerie's collision geoms): the meshes are what a camera sees.
            geom.contype, geom.conaffinity, geom.group = 2, 1, 3
    # A driven finger joint moves the joints coupled to it (q_follower = ratio * q_driven): its servo
    # moves their armature and damping too, 1 + sum(ratio^2) times its own; its gain is scaled alike.
    load: dict[str, float] = {}
    followers = set()
    for equality in spec.equalities:
        if equality.type == mujoco.mjtEq.mjEQ_JOINT:
            followers.add(equality.name1)
            load[equality.name2] = load.get(equality.name2, 1.0) + float(equality.data[1]) ** 2
    for joint in spec.joints:
        if joint.type != mujoco.mjtJoint.mjJNT_HINGE:
            continue
        finger = joint.name[:2] in ('L_', 'R_')
        kp, kd = (FINGER_KP * load.get(joint.name, 1.0), 0.0) if finger else _gains(joint.name, gains)
        if joint.name in followers:
            # The hand's linkage sets a coupled joint: its actuator is there so that a 54-joint target
            # vector (InternUtopia's teleoperation) fits, and it pulls with no force.
            kp = 0.0
        joint.armature = FINGER_ARMATURE if finger else BODY_ARMATURE
        if finger:
            joint.damping = [FINGER_DAMPING, 0.0, 0.0]
        effort = efforts.get(joint.name, 0.0)
        actuator = spec.add_actuator(name=joint.name, target=joint.name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        actuator.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        actuator.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        actuator.gainprm[0] = kp
        actuator.biasprm[:3] = [0.0, -kp, -kd]
        if effort > 0:
            actuator.forcelimited = True
            actuator.forcerange = [-effort, effort]
    return spec


@functools.cache
def _walking_spec(hands: str) -> mujoco.MjSpec:
    spec = gr1_base_spec(WALKING_GAINS)
    for foot in FEET:
        add_sole(spec, spec.body(FOOT_BODY[foot]), foot, SOLE_SITE_SIZE, SOLE_SITE_POS)
    if hands == 'welded':
        weld_hands(spec)
    return spec


def walking_spec(hands: str = 'servo') -> mujoco.MjSpec:
    """A fresh copy of the physics-honest model a walking controller drives (module docstring).

    ``hands='welded'``: the training model of the walking policy (:func:`weld_hands`); the default
    ``'servo'`` is GR1 as users drive it, its 22 finger joints held by their servos."""
    return _walking_spec(check_hands(hands)).copy()


def check_hands(hands: str) -> str:
    """``hands`` if it is one of :data:`HANDS`, else a ``ValueError`` naming the valid values."""
    if hands not in HANDS:
        raise ValueError(f'hands={hands!r}: valid values are {list(HANDS)}')
    return hands


def weld_hands(spec: mujoco.MjSpec) -> None:
    """Weld both Inspire hands to the wrists: their 22 joints (names ``L_...``, ``R_...``), the
    joints' servos and the linkage equalities between them go; every link stays, at the joints'
    zero (the standing pose's open hand), with its mass and inertia.

    The walking policy reads and drives the legs only, and the fingers (grams each) held by their
    servos move the body as a welded hand does; a 60-dof GR1 becomes 38 dof, and a physics step
    costs about 40 % less (docs/training.md, "GR1"). The trainer trains on this model; the policy
    is evaluated and shipped on the full one."""
    hand = {joint.name for joint in spec.joints if joint.name.startswith(HAND_JOINT_PREFIXES)}
    for equality in list(spec.equalities):
        if equality.name1 in hand or equality.name2 in hand:
            spec.delete(equality)
    for actuator in list(spec.actuators):
        if actuator.target in hand:
            spec.delete(actuator)
    for joint in [joint for joint in spec.joints if joint.name in hand]:
        spec.delete(joint)


def carried_spec(mocap_body: str) -> mujoco.MjSpec:
    """The carried model: gravity compensated, stiff standing servos, slippery soles, ``base_link``
    welded (softly) to the mocap body ``mocap_body``."""
    spec = gr1_base_spec(CARRIED_GAINS)
    for foot in FEET:
        for geom in spec.body(FOOT_BODY[foot]).geoms:
            if geom.contype:
                geom.friction = [CARRIED_SOLE_FRICTION, 0.005, 0.0001]
    weld_to_mocap(spec, 'base_link', mocap_body)
    return spec


__all__ = ['FEET', 'GR1_INSTALL', 'GR1_PACKAGE', 'GR1_URDF', 'HANDS', 'HAND_JOINT_PREFIXES', 'STANDING_HEIGHT', 'STANDING_POSE',
           'WALKING_PHYSICS_DT', 'carried_spec', 'check_hands', 'gr1_base_spec', 'gr1_urdf_path', 'walking_spec', 'weld_hands']
