"""The sole sensors a walking controller reads, one set a foot: a box site under the foot
(``{foot}_sole``) with a touch sensor (normal force), its position and its linear velocity
(``{foot}_sole_touch``, ``_pos``, ``_vel``). H1's, GR1's and Aliengo's walking models have them.

>>> import mujoco
>>> spec = mujoco.MjSpec.from_string('<mujoco><worldbody><body name="foot"><geom size="0.05"/></body></worldbody></mujoco>')
>>> add_sole(spec, spec.body('foot'), 'left', size=(0.1, 0.05, 0.01))
>>> model = spec.compile()
>>> [model.sensor(i).name for i in range(model.nsensor)]
['left_sole_touch', 'left_sole_pos', 'left_sole_vel']
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco


def add_sole(spec: mujoco.MjSpec, body: mujoco.MjsBody, foot: str, size: Sequence[float],
             pos: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
    """Add foot ``foot``'s sole site (a box of half-sizes ``size`` at ``pos`` in ``body``, hidden in
    group 4) and its touch, position and velocity sensors to ``spec``."""
    body.add_site(name=f'{foot}_sole', type=mujoco.mjtGeom.mjGEOM_BOX, pos=list(pos), size=list(size),
                  rgba=[0.9, 0.5, 0.1, 0.0], group=4)
    for suffix, kind in (('touch', mujoco.mjtSensor.mjSENS_TOUCH), ('pos', mujoco.mjtSensor.mjSENS_FRAMEPOS),
                         ('vel', mujoco.mjtSensor.mjSENS_FRAMELINVEL)):
        spec.add_sensor(name=f'{foot}_sole_{suffix}', type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=f'{foot}_sole')


__all__ = ['add_sole']
