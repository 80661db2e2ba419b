"""The state arrays of a pack: one typed view, the same for every backend.

A pack (the slots of one structure, see :class:`~internutopia.core.backend.interface.Pack`) keeps
its slots' simulations in ``(env_num, ...)`` arrays: row ``i`` is env slot ``i`` (rows of slots in
other packs are unused), positions are env-local (the slot's own world frame), quaternions are
wxyz, units SI. ``pack.data`` is a :class:`StateArrays`: plain attributes over those arrays (no
properties, no copies), so reading ``data.qpos`` costs what reading an attribute costs, and a
compiled kernel takes the array itself.

Three kinds of field:

- **state** (:data:`STATE_FIELDS`): live and writable; a write is that slot's state at the next
  step (after :meth:`~internutopia.core.backend.interface.Pack.forward` if derived fields must
  follow it before then).
- **outputs** (:data:`OUTPUT_FIELDS`): derived, refreshed by every step. As with ``mj_step``,
  they describe the state at the *start* of the step that refreshed them.
- **on request** (:data:`ON_REQUEST_FIELDS`): derived fields a backend keeps only once some code
  asked for them with :meth:`~internutopia.core.backend.interface.Pack.field` (each bound field
  costs a copy per step); until then reading the attribute raises ``AttributeError`` naming that call.
  They describe the state at the start of the last step (or at the last ``forward``).

The field names are MuJoCo's ``MjData`` names, which MuJoCo Warp's ``Data`` shares; sizes in the
shapes (``nq``, ``nv``, ``nu``, ``na``, ``nbody``, ``nmocap``, ``nsite``, ``ncam``, ``ngeom``,
``nsensordata``) are the pack's model's (:class:`~internutopia.core.backend.interface.ModelLookup`).

A field not bound raises (Python 3.13 adds a "did you mean" hint at the end):

>>> import numpy as np
>>> data = StateArrays()
>>> data.qpos = np.zeros((2, 7))
>>> data.qpos.shape
(2, 7)
>>> data.xpos  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
AttributeError: StateArrays has no field 'xpos' bound; bind it with pack.field('xpos')...
"""

from __future__ import annotations

import numpy as np

__all__ = ['ON_REQUEST_FIELDS', 'OUTPUT_FIELDS', 'STATE_FIELDS', 'StateArrays']

#: Fields every pack holds, live and writable (the state a step starts from).
STATE_FIELDS = ('time', 'qpos', 'qvel', 'act', 'ctrl', 'qfrc_applied', 'xfrc_applied', 'mocap_pos', 'mocap_quat')
#: Derived fields every pack holds, refreshed by each step.
OUTPUT_FIELDS = ('sensordata',)
#: Derived fields a pack holds once asked for (``pack.field(name)``).
ON_REQUEST_FIELDS = ('xpos', 'xquat', 'xmat', 'xipos', 'ximat', 'site_xpos', 'site_xmat', 'geom_xpos', 'geom_xmat',
                     'cam_xpos', 'cam_xmat', 'subtree_com', 'cvel', 'cfrc_ext', 'qacc', 'qfrc_actuator', 'actuator_force')


class StateArrays:
    """The ``(env_num, ...)`` arrays of a pack, row ``i`` being env slot ``i``.

    State (live, writable; a write is the slot's state at the next step):

    Attributes:
        time: simulated time, s. Shape (env_num,).
        qpos: joint positions; a free joint's 7 are its position (env-local) then its wxyz
            orientation. Shape (env_num, nq).
        qvel: joint velocities; a free joint's 6 are its linear velocity (world axes) then its
            angular velocity (body axes). Shape (env_num, nv).
        act: actuator activations. Shape (env_num, na).
        ctrl: actuator controls (servo targets, velocities or torques, per actuator). Shape (env_num, nu).
        qfrc_applied: applied generalized forces. Shape (env_num, nv).
        xfrc_applied: applied force then torque per body, world axes, at the body's centre of
            mass. Shape (env_num, nbody, 6).
        mocap_pos: mocap body positions, env-local. Shape (env_num, nmocap, 3).
        mocap_quat: mocap body orientations, wxyz. Shape (env_num, nmocap, 4).
        sensordata: sensor readings, refreshed by each step, at the state the step started from
            (the layout of a sensor: ``lookup.sensor(name)``). Shape (env_num, nsensordata).
        xpos: body frame positions, env-local. Shape (env_num, nbody, 3). On request.
        xquat: body frame orientations, wxyz. Shape (env_num, nbody, 4). On request.
        xmat: body frame rotations, row-major. Shape (env_num, nbody, 9). On request.
        xipos: body centre-of-mass positions, env-local. Shape (env_num, nbody, 3). On request.
        ximat: body inertia frame rotations, row-major. Shape (env_num, nbody, 9). On request.
        site_xpos: site positions, env-local. Shape (env_num, nsite, 3). On request.
        site_xmat: site rotations, row-major. Shape (env_num, nsite, 9). On request.
        geom_xpos: geom positions, env-local. Shape (env_num, ngeom, 3). On request.
        geom_xmat: geom rotations, row-major. Shape (env_num, ngeom, 9). On request.
        cam_xpos: camera positions, env-local. Shape (env_num, ncam, 3). On request.
        cam_xmat: camera rotations, row-major. Shape (env_num, ncam, 9). On request.
        subtree_com: centre of mass of each body's subtree, env-local. Shape (env_num, nbody, 3). On request.
        cvel: body velocities at the subtree centre of mass (angular, then linear; world axes).
            Shape (env_num, nbody, 6). On request.
        cfrc_ext: external and contact forces per body (torque, then force). Shape (env_num, nbody, 6). On request.
        qacc: joint accelerations. Shape (env_num, nv). On request.
        qfrc_actuator: actuator forces in joint space. Shape (env_num, nv). On request.
        actuator_force: actuator forces in actuator space. Shape (env_num, nu). On request.

    A backend may bind further fields of its own engine (``pack.field(name)``); they are read as
    attributes too, but no backend-neutral code may rely on them.
    """

    __slots__ = (*STATE_FIELDS, *OUTPUT_FIELDS, *ON_REQUEST_FIELDS, '_extra')

    time: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray
    ctrl: np.ndarray
    qfrc_applied: np.ndarray
    xfrc_applied: np.ndarray
    mocap_pos: np.ndarray
    mocap_quat: np.ndarray
    sensordata: np.ndarray
    xpos: np.ndarray
    xquat: np.ndarray
    xmat: np.ndarray
    xipos: np.ndarray
    ximat: np.ndarray
    site_xpos: np.ndarray
    site_xmat: np.ndarray
    geom_xpos: np.ndarray
    geom_xmat: np.ndarray
    cam_xpos: np.ndarray
    cam_xmat: np.ndarray
    subtree_com: np.ndarray
    cvel: np.ndarray
    cfrc_ext: np.ndarray
    qacc: np.ndarray
    qfrc_actuator: np.ndarray
    actuator_force: np.ndarray

    def __init__(self) -> None:
        self._extra: dict[str, np.ndarray] = {}

    def bind(self, name: str, array: np.ndarray) -> None:
        """Make ``array`` the field ``name`` (a backend's call, when it binds a field)."""
        if name in _DECLARED:
            object.__setattr__(self, name, array)
        else:
            self._extra[name] = array

    def extra_names(self) -> tuple[str, ...]:
        """Names of the bound fields beyond the declared ones (a backend's own)."""
        return tuple(self._extra)

    def bound(self, name: str) -> np.ndarray | None:
        """The array of field ``name`` if it is bound, else ``None``."""
        return getattr(self, name, None)

    def __getattr__(self, name: str) -> np.ndarray:
        # Only reached for fields not set: on-request fields not bound yet, and undeclared names.
        if name.startswith('_'):  # not set yet (copying, unpickling)
            raise AttributeError(name)
        try:
            return self._extra[name]
        except KeyError:
            raise AttributeError(f'{type(self).__name__} has no field {name!r} bound; bind it with pack.field({name!r})') from None


_DECLARED = frozenset(StateArrays.__slots__)
