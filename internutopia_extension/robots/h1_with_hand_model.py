"""H1 with two Inspire dexterous hands: the MuJoCo model.

The body is H1's walking (or carried) model (:mod:`~internutopia_extension.robots.h1_locomotion.model`,
Menagerie's H1). Each forearm gets a ``{side}_hand_link`` body where Unitree's ``h1_with_hand``
description puts it (0.2605 m along the forearm from the elbow axis, 0.0185 m below it; InternUtopia's
USD robot is made from that description and its IK end effector is ``right_hand_link``). Unitree's
wrist roll joint is left out, as InternUtopia's robot drives 19 body joints. The hand itself is
the Inspire hand URDF of the PyPI package ``fourier-robot-descriptions`` (Apache-2.0), read at run
time and converted by MuJoCo's URDF importer: 12 finger joints per hand, 6 of them coupled to the
others by the URDF's ``mimic`` tags (MuJoCo joint equalities), and a position servo on each of the
6 driven joints (:data:`HAND_DRIVEN`). The package ships visual meshes only (no collision shapes),
so the hands are drawn and weigh what the URDF says (0.19 kg each) but touch nothing.

>>> hand_joint_names('right', driven=True)[:3]
['R_thumb_proximal_yaw_joint', 'R_thumb_proximal_pitch_joint', 'R_index_proximal_joint']
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path

import mujoco
import numpy as np

#: The package the Inspire hands come from, and the command that installs it (its declared
#: dependencies, pinocchio and git tooling, are not needed to read its files).
HAND_PACKAGE = 'fourier_robot_descriptions'
HAND_INSTALL = 'pip install --no-deps fourier-robot-descriptions'
SIDES = {'left': 'L', 'right': 'R'}
#: ``{side}_hand_link`` in ``{side}_elbow_link``'s frame (Unitree's ``h1_with_hand`` geometry).
HAND_LINK_POS = (0.2605, 0.0, -0.0185)
#: The Inspire URDF's base frame in ``{side}_hand_link``: its fingers point along the URDF's -z,
#: the forearm's +x, so the frame is turned -90 degrees about y and set 3 mm out (this puts the
#: finger roots where Unitree's model has them, to 0.6 mm).
HAND_BASE_POS = (0.003, 0.0, 0.0)
HAND_BASE_QUAT = (np.sqrt(0.5), 0.0, -np.sqrt(0.5), 0.0)
#: The driven finger joints, per hand (without the ``L_``/``R_`` prefix); the other six follow them.
HAND_DRIVEN = ('thumb_proximal_yaw_joint', 'thumb_proximal_pitch_joint', 'index_proximal_joint',
               'middle_proximal_joint', 'ring_proximal_joint', 'pinky_proximal_joint')
#: Every finger joint per hand (driven and coupled), in the URDF's order.
HAND_JOINTS = ('thumb_proximal_yaw_joint', 'thumb_proximal_pitch_joint', 'thumb_intermediate_joint', 'thumb_distal_joint',
               'index_proximal_joint', 'index_intermediate_joint', 'middle_proximal_joint', 'middle_intermediate_joint',
               'ring_proximal_joint', 'ring_intermediate_joint', 'pinky_proximal_joint', 'pinky_intermediate_joint')
#: Driven joint targets (rad) of an open and of a closed hand (within the URDF's limits: the thumb
#: turns across the palm, then the four fingers curl).
HAND_OPEN = np.zeros(len(HAND_DRIVEN))
HAND_CLOSED = np.array([1.2, 0.5, 1.5, 1.5, 1.5, 1.5])
#: Finger servos: gain (N m/rad), damping (N m s/rad) and armature (kg m^2) of the finger joints,
#: and the force limit (the URDF's effort limit, 1 N m). The links weigh grams: the armature keeps
#: the servo stable at the walking model's 5 ms step; a hand opens or closes in about 0.5 s.
FINGER_KP, FINGER_DAMPING, FINGER_ARMATURE, FINGER_FORCE = 0.5, 0.05, 1e-3, 1.0
#: Fingertip bodies of the URDF (sites for the observation), per hand.
FINGERTIPS = ('thumb_tip', 'index_tip', 'middle_tip', 'ring_tip', 'pinky_tip')


def hand_package_root() -> Path:
    """The ``assets`` folder of ``fourier-robot-descriptions``.

    Raises:
        ImportError: the package is not installed (naming the command that installs it).
    """
    try:
        root = resources.files(HAND_PACKAGE)
    except ModuleNotFoundError as exc:
        raise ImportError(f'H1WithHandRobot needs the Inspire hand models of fourier-robot-descriptions: {HAND_INSTALL}') from exc
    path = Path(str(root)) / 'assets'
    if not (path / 'urdf').is_dir():
        raise FileNotFoundError(f'{path}/urdf is missing from {HAND_PACKAGE}; reinstall it ({HAND_INSTALL})')
    return path


@functools.cache
def _hand_spec(side: str) -> mujoco.MjSpec:
    root = hand_package_root()
    urdf = root / 'urdf' / f'inspire_{side}_hand.urdf'
    text = urdf.read_text()
    # MuJoCo's URDF importer drops visual geoms and mesh folders unless told otherwise; the hand
    # has only visual geoms, and its meshes sit in ../meshes beside the URDF.
    options = (f'<mujoco><compiler discardvisual="false" strippath="false" fusestatic="false" '
               f'meshdir="{urdf.parent}"/></mujoco>')
    text, found = re.subn(r'(<robot\b[^>]*>)', r'\1' + options, text, count=1)
    if not found:
        raise ValueError(f'{urdf} has no <robot> element')
    return mujoco.MjSpec.from_string(text)


def hand_spec(side: str) -> mujoco.MjSpec:
    """A fresh copy of the ``'left'`` or ``'right'`` Inspire hand as MuJoCo reads its URDF."""
    if side not in SIDES:
        raise ValueError(f'side must be one of {list(SIDES)}; got {side!r}')
    return _hand_spec(side).copy()


def attach_hands(spec: mujoco.MjSpec) -> None:
    """Add ``{side}_hand_link`` to both forearms of the H1 ``spec`` and an Inspire hand with its
    finger servos to each (see the module docstring); actuators are named after their joints."""
    for side, prefix in SIDES.items():
        elbow = spec.body(f'{side}_elbow_link')
        if elbow is None:
            raise ValueError(f'the H1 model has no {side}_elbow_link to attach a hand to')
        hand_link = elbow.add_body(name=f'{side}_hand_link', pos=list(HAND_LINK_POS))
        frame = hand_link.add_frame(pos=list(HAND_BASE_POS), quat=list(HAND_BASE_QUAT))
        hand = hand_spec(side)
        # Attached under a namespace (MuJoCo warns about an empty one), then given back the URDF's
        # own names, which are InternUtopia's (``R_index_proximal_joint``, ...).
        namespace = f'inspire_{side}/'
        frame.attach_body(hand.body(f'{prefix}_hand_base_link'), namespace, '')
        # (Meshes and materials keep the namespace: geoms refer to them by name.)
        for element in (*spec.bodies, *spec.joints, *spec.equalities):
            if element.name.startswith(namespace):
                element.name = element.name[len(namespace):]
        for equality in spec.equalities:
            equality.name1 = equality.name1.removeprefix(namespace)
            equality.name2 = equality.name2.removeprefix(namespace)
        for tip in FINGERTIPS:
            spec.body(f'{prefix}_{tip}').add_site(name=f'{prefix}_{tip}', size=[0.004, 0, 0], rgba=[0, 1, 0, 0], group=4)
        for name in HAND_JOINTS:
            joint = spec.joint(f'{prefix}_{name}')
            joint.armature, joint.damping = FINGER_ARMATURE, [FINGER_DAMPING, 0.0, 0.0]
        # A driven joint moves its coupled joints too (q_follower = ratio * q_driven): its servo
        # moves their armature and damping as well, 1 + sum(ratio^2) times its own; the gain is
        # scaled alike so that every finger closes in the same time.
        load = {name: 1.0 for name in hand_joint_names(side, driven=True)}
        for equality in spec.equalities:
            if equality.type == mujoco.mjtEq.mjEQ_JOINT and equality.name2 in load:
                load[equality.name2] += float(equality.data[1]) ** 2
        for joint_name, factor in load.items():
            kp = FINGER_KP * factor
            spec.add_actuator(name=joint_name, target=joint_name, trntype=mujoco.mjtTrn.mjTRN_JOINT,
                              gaintype=mujoco.mjtGain.mjGAIN_FIXED, biastype=mujoco.mjtBias.mjBIAS_AFFINE,
                              gainprm=[kp] + [0.0] * 9, biasprm=[0.0, -kp, 0.0] + [0.0] * 7,
                              forcelimited=True, forcerange=[-FINGER_FORCE, FINGER_FORCE])


def hand_joint_names(side: str, driven: bool = False) -> list[str]:
    """The finger joint names of one hand (``driven``: only those with a servo)."""
    return [f'{SIDES[side]}_{name}' for name in (HAND_DRIVEN if driven else HAND_JOINTS)]


def hand_mass(model: mujoco.MjModel, side: str) -> float:
    """Mass (kg) of one hand of a compiled model: ``{side}_hand_link`` and everything below it."""
    root = model.body(f'{side}_hand_link').id
    below = [b for b in range(model.nbody) if _descends(model, b, root)]
    return float(model.body_mass[below].sum())


def _descends(model: mujoco.MjModel, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return False


__all__ = ['FINGERTIPS', 'HAND_CLOSED', 'HAND_DRIVEN', 'HAND_INSTALL', 'HAND_JOINTS', 'HAND_OPEN', 'HAND_PACKAGE',
           'SIDES', 'attach_hands', 'hand_joint_names', 'hand_mass', 'hand_package_root', 'hand_spec']
