"""``GripperController``: open or close a parallel gripper, for all slots at once.

Action (one slot): ``['open']`` or ``['close']`` (InternUtopia's format; a bare string works too),
or a number (``>= 0.5`` opens: a Gymnasium action's gripper part).
The array API takes one number per slot: ``>= 0.5`` opens, below closes (or the strings).
The command stays in force until the next one; a closed gripper keeps squeezing what it holds.

Observation: ``gripper_pos`` (2,), the two finger joint positions in metres (0 = closed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia.core.util.jit import Kernel

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

_COMMANDS = {'open': 1.0, 'close': 0.0}
_FLOAT64 = np.dtype(np.float64)


@BaseController.register('GripperController')
class GripperController(BaseController):
    """Drives the robot's ``gripper_actuator`` (ctrl ``gripper_ctrl_closed`` (default 0) closed,
    ``gripper_ctrl_open`` open)."""

    _parse_kernel = None  # the compiled parse_batch (set by bind where numba is available)

    def bind(self, world: Pack) -> None:
        super().bind(world)
        self.world = world
        # The fingers' qpos columns as a slice when they are consecutive (they are in the Panda's
        # model): every slot's observation is then a block copy, where index arrays cost a gather.
        adr = np.asarray(self.robot.finger_qposadr, dtype=np.intp)
        consecutive = len(adr) and np.array_equal(adr, np.arange(adr[0], adr[0] + len(adr)))
        self._finger_block = slice(int(adr[0]), int(adr[0]) + len(adr)) if consecutive else None
        self._parse_kernel = _open_kernel.compiled_or(None)
        _open_kernel.warm(np.zeros(1), np.empty(1))  # compiled (or loaded) now, not in the first step

    def parse_action(self, action: Any) -> float:
        command = action[0] if isinstance(action, (list, tuple)) and len(action) == 1 else action
        if isinstance(command, np.ndarray) and command.shape == (1,):
            command = command[0]  # a Gymnasium action's one number, or np.array(['open']) as InternUtopia takes it
        if isinstance(command, str) and command in _COMMANDS:
            return _COMMANDS[command]
        if isinstance(command, (int, float, np.integer, np.floating)) and not isinstance(command, bool) and np.isfinite(command):
            return 1.0 if command >= 0.5 else 0.0  # as the array API: >= 0.5 opens
        raise ValueError(f"gripper action must be ['open'], ['close'] or a number (>= 0.5 opens); got {action!r}")

    def batch(self, parsed: list[float]) -> np.ndarray:
        return np.asarray(parsed, dtype=float)

    def parse_batch(self, actions: Any) -> np.ndarray:
        kernel = self._parse_kernel
        if kernel is not None and type(actions) is np.ndarray and actions.dtype is _FLOAT64 and actions.ndim == 1:
            # The array API's usual argument (one number per env): one compiled pass, where
            # parse_rows costs several numpy calls; a row that is not finite goes the numpy way,
            # which names the problem.
            out = np.empty(len(actions))
            if kernel(actions, out):
                return out
        return parse_rows(actions)

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        robot = self.robot
        # Slots are sorted ids: as many as there are envs are every slot, a column view's rows.
        rows = slice(None) if len(slots) == self.env_num else slots
        closed = getattr(robot, 'gripper_ctrl_closed', 0.0)
        self.world.data.ctrl[rows, robot.gripper_actuator] = closed + batch * (robot.gripper_ctrl_open - closed)

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        qpos = self.world.data.qpos
        if self._finger_block is not None and len(slots) == self.env_num:
            return {'gripper_pos': qpos[:, self._finger_block].copy()}
        return {'gripper_pos': qpos[slots[:, None], self.robot.finger_qposadr]}


def parse_rows(actions: Any) -> np.ndarray:
    """The array API's gripper actions (one number per env, ``>= 0.5`` opens, or ``'open'``/``'close'``)
    validated and parsed as :meth:`GripperController.parse_batch` returns them: ``(k,)`` of 1.0
    (open) and 0.0 (close). The numpy reference of the compiled ``_open_rows``."""
    array = np.asarray(actions)
    if array.dtype.kind in 'US':
        flat = array.reshape(len(array), -1)
        if flat.shape[1] != 1 or not np.isin(flat[:, 0], list(_COMMANDS)).all():
            raise ValueError(f"gripper actions must be 'open'/'close' or numbers, one per env; got {array.tolist()!r}")
        return (flat[:, 0] == 'open').astype(float)
    try:
        values = np.asarray(array, dtype=float).reshape(len(array), -1)
    except (TypeError, ValueError):
        raise ValueError(f"gripper actions must be numbers (>= 0.5 opens) or 'open'/'close', one per env; got {actions!r}") from None
    if values.shape[1] != 1 or not np.isfinite(values).all():
        raise ValueError(f'gripper actions must be one finite number per env (>= 0.5 opens); got shape {values.shape}')
    return (values[:, 0] >= 0.5).astype(float)


def _open_rows(values, out):  # pragma: no cover - compiled
    """Compiled twin of :func:`parse_rows` for a float64 ``(k,)`` array: fills ``out`` and returns
    True, or returns False at the first value that is not finite."""
    for row in range(values.shape[0]):
        value = values[row]
        if not np.isfinite(value):
            return False
        out[row] = 1.0 if value >= 0.5 else 0.0
    return True


_open_kernel = Kernel(_open_rows)
