"""Motion-capture hand frames: the dict a mocap server sends, checked and packed into one array row.

A frame is what InternUtopia's hand-tracking server (HaMeR on a webcam) returns from ``/results``:
per hand (``lh_`` left, ``rh_`` right), when that hand is seen,

* ``*_bones_kps``: ``(21, 3)`` MANO keypoints in metres, relative to the wrist-centred hand
  (0 wrist, 4 thumb tip, 8 index tip, 12 middle tip, 16 ring tip, 20 little-finger tip);
* ``*_bones_kps_cam``: the same keypoints in the camera's frame (x right, y down, z away from the
  camera), so row 0 is the wrist's position;
* ``*_global_orient``: ``(3, 3)`` rotation of the hand in the camera's frame;
* ``*_pred_cam_t_full``: ``(3,)`` the hand's translation (informational, unused here).

A hand that is not seen has no keys. ``status``/``message`` (the server's "no results yet"
reply) are allowed and ignored. Any other key is an error that names it: a misspelt key would
otherwise leave the arm standing still without a word.

:func:`pack_frame` turns one frame into a row of :data:`WIDTH` floats (:data:`COLUMNS` names them),
so a step's frames of all slots are one ``(k, WIDTH)`` array; :func:`frame_for_target` goes the
other way, making the frame whose wrist and pinch command a given end-effector target.

>>> row = pack_frame(frame_for_target((0.1, 0.0, 0.0), pinch=True))
>>> bool(row[COLUMNS['has_rh']]), float(row[COLUMNS['rh_pinch']]) < PINCH_DISTANCE
(True, True)
>>> pack_frame({'rh_bones_kps': [[0, 0, 0]]})
Traceback (most recent call last):
...
ValueError: mocap frame key 'rh_bones_kps' must be 21 keypoints of (x, y, z) metres, shape (21, 3); got shape (1, 3)
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ['CAMERA_TO_ROBOT', 'COLUMNS', 'GRIPPER_FROM_HAND', 'HAND_KEYS', 'PINCH_DISTANCE', 'WIDTH', 'frame_for_target',
           'hand_keypoints', 'pack_frame']

#: Thumb-to-finger distance (m) under which two fingertips count as pinched (InternUtopia's 0.05).
PINCH_DISTANCE = 0.05
#: Rotation taking camera axes (x right, y down, z away) to the robot's (x ahead, y left, z up):
#: robot x = -camera z, robot y = camera x, robot z = -camera y (InternUtopia's mapping).
CAMERA_TO_ROBOT = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
#: Right factor of the gripper's orientation: ``R_gripper = CAMERA_TO_ROBOT @ R_hand @ GRIPPER_FROM_HAND``.
GRIPPER_FROM_HAND = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])

_KEYPOINTS = 21
_THUMB, _INDEX, _MIDDLE, _RING, _LITTLE = 4, 8, 12, 16, 20

#: The keys a frame may have, with what each must be.
HAND_KEYS = {
    'lh_bones_kps': 'keypoints', 'rh_bones_kps': 'keypoints', 'lh_bones_kps_cam': 'keypoints', 'rh_bones_kps_cam': 'keypoints',
    'lh_global_orient': 'rotation', 'rh_global_orient': 'rotation', 'lh_pred_cam_t_full': 'vector',
    'rh_pred_cam_t_full': 'vector', 'status': 'text', 'message': 'text',
}

_NAMES = ['has_rh', 'rh_x', 'rh_y', 'rh_z', *[f'rh_rot{i}' for i in range(9)], 'has_rh_rot', 'rh_pinch',
          'has_lh', 'lh_x', 'lh_y', 'lh_z', 'lh_pinch', 'lh_thumb_little', 'lh_thumb_ring', 'lh_thumb_middle']
#: Column of each packed value: flags are 1.0/0.0; distances (m) are NaN where the hand is not seen.
COLUMNS = {name: i for i, name in enumerate(_NAMES)}
WIDTH = len(_NAMES)


def _array(frame: Mapping[str, Any], key: str, shape: tuple[int, ...], text: str) -> np.ndarray:
    value = frame[key]
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):  # (OverflowError: an integer too large for a float)
        raise ValueError(f'mocap frame key {key!r} must be {text}, shape {shape}; got {value!r:.200}') from None
    if array.shape != shape:
        raise ValueError(f'mocap frame key {key!r} must be {text}, shape {shape}; got shape {array.shape}')
    if not np.isfinite(array).all():
        raise ValueError(f'mocap frame key {key!r} must be finite (no NaN or inf)')
    return array


def _check_keys(frame: Any) -> Mapping[str, Any]:
    if not isinstance(frame, Mapping):
        raise ValueError(f'a mocap frame must be a dict of hand keypoints (keys {sorted(HAND_KEYS)}); got {type(frame).__name__}')
    for key in frame:
        if key not in HAND_KEYS:
            near = difflib.get_close_matches(str(key), HAND_KEYS, n=1)
            hint = f' (did you mean {near[0]!r}?)' if near else ''
            raise ValueError(f'unknown mocap frame key {key!r}{hint}; valid keys: {sorted(HAND_KEYS)}')
    return frame


def _rotation(frame: Mapping[str, Any], key: str) -> np.ndarray:
    rot = _array(frame, key, (3, 3), 'a 3x3 rotation matrix')
    if np.abs(rot.T @ rot - np.eye(3)).max() > 0.05 or np.linalg.det(rot) <= 0:
        raise ValueError(f'mocap frame key {key!r} must be a rotation matrix (orthonormal, det +1); got {rot.round(3).tolist()}')
    return rot


def pack_frame(frame: Any) -> np.ndarray:
    """One frame checked and packed into a ``(WIDTH,)`` row (see the module doc); a ``ValueError``
    names the bad key and what it must be. A hand counts as seen when its ``*_bones_kps`` is given;
    its wrist is row 0 of ``*_bones_kps_cam`` (the camera origin when that is missing, as
    InternUtopia's controller assumes)."""
    frame = _check_keys(frame)
    row = np.full(WIDTH, np.nan)
    for key, kind in HAND_KEYS.items():  # every key checked, used or not
        if key in frame and kind == 'rotation':
            _rotation(frame, key)
        elif key in frame and kind == 'vector':
            _array(frame, key, (3,), 'a vector of 3 metres')
        elif key in frame and kind == 'text' and not isinstance(frame[key], str):
            raise ValueError(f'mocap frame key {key!r} must be text (the server\'s status reply); got {frame[key]!r:.200}')
    text = f'{_KEYPOINTS} keypoints of (x, y, z) metres'
    for hand in ('rh', 'lh'):
        cam = _array(frame, f'{hand}_bones_kps_cam', (_KEYPOINTS, 3), text) if f'{hand}_bones_kps_cam' in frame else None
        seen = f'{hand}_bones_kps' in frame
        row[COLUMNS[f'has_{hand}']] = float(seen)
        if not seen:
            continue
        kps = _array(frame, f'{hand}_bones_kps', (_KEYPOINTS, 3), text)
        wrist = cam[0] if cam is not None else np.zeros(3)
        row[COLUMNS[f'{hand}_x']:COLUMNS[f'{hand}_x'] + 3] = wrist
        row[COLUMNS[f'{hand}_pinch']] = np.linalg.norm(kps[_THUMB] - kps[_INDEX])
        if hand == 'rh':
            has_rot = 'rh_global_orient' in frame
            row[COLUMNS['has_rh_rot']] = float(has_rot)
            start = COLUMNS['rh_rot0']
            row[start:start + 9] = (_rotation(frame, 'rh_global_orient') if has_rot else np.eye(3)).ravel()
        else:
            for name, tip in (('lh_thumb_little', _LITTLE), ('lh_thumb_ring', _RING), ('lh_thumb_middle', _MIDDLE)):
                row[COLUMNS[name]] = np.linalg.norm(kps[_THUMB] - kps[tip])
    return row


def hand_keypoints(pinch: bool, pinched_with: int = _INDEX) -> np.ndarray:
    """``(21, 3)`` keypoints (m, wrist-centred) of an open hand, or of one whose thumb tip touches
    fingertip ``pinched_with`` (8 index, 12 middle, 16 ring, 20 little) when ``pinch``."""
    kps = np.zeros((_KEYPOINTS, 3))
    for finger in range(5):  # four joints per finger, fanned out in the hand's plane
        angle = np.radians(-60.0 + 30.0 * finger)  # (fingertips > 5 cm apart: one gesture at a time)
        direction = np.array([np.sin(angle), -np.cos(angle), 0.0])
        for joint in range(4):
            kps[1 + 4 * finger + joint] = direction * 0.03 * (joint + 1 + (finger > 0))
    if pinch:
        kps[_THUMB] = kps[pinched_with] + (0.005, 0.0, 0.0)
    return kps


def frame_for_target(offset: Sequence[float], orientation: Sequence[float] | np.ndarray | None = None, pinch: bool = False,
                     scale: Sequence[float] = (1.0, 1.0, 1.0), left: dict[str, Any] | None = None) -> dict[str, Any]:
    """The frame whose right hand commands the end-effector target ``origin + offset`` (metres, in
    the arm's base frame), with gripper orientation ``orientation`` (a ``(3, 3)`` rotation or wxyz
    quaternion in the base frame; ``None``: the hand's identity orientation) and the gripper closed
    when ``pinch``, for a controller whose config has this ``scale``. The teleop controller moves
    the target by the wrist's motion between frames, so a stream of these frames drives the target
    through the offsets (counted from the first frame's, which it takes as the start).
    ``left``: extra keys of a left hand (see :func:`hand_keypoints`).

    >>> frame = frame_for_target((0.2, 0.0, -0.1), scale=(0.25, 0.75, 0.75))
    >>> np.round(frame['rh_bones_kps_cam'][0], 3).tolist()  # the wrist, in the camera's frame
    [0.0, 0.133, -0.8]
    """
    robot = np.asarray(offset, dtype=float) / np.asarray(scale, dtype=float)
    wrist = CAMERA_TO_ROBOT.T @ robot
    if orientation is None:
        hand_rot = np.eye(3)
    else:
        gripper = np.asarray(orientation, dtype=float)
        if gripper.shape == (4,):
            from internutopia_extension.controllers.kinematics import quat_to_mat

            gripper = quat_to_mat(gripper)
        hand_rot = CAMERA_TO_ROBOT.T @ gripper @ GRIPPER_FROM_HAND.T
    kps = hand_keypoints(pinch)
    frame: dict[str, Any] = {'rh_bones_kps': kps.tolist(), 'rh_bones_kps_cam': (kps + wrist).tolist(),
                             'rh_global_orient': hand_rot.tolist()}
    frame.update(left or {})
    return frame
