"""Jetbot: a small differential-drive robot (MJCF written in this project)."""

from __future__ import annotations

import os

import mujoco
import numpy as np

from internutopia.core.entity import in_command_phase
from internutopia.core.robot.base import BaseRobot, rows_of
from internutopia_extension.robots.assets import load_spec, own_asset_path
from internutopia_extension.robots.scaling import scale_spec, uniform_factor

_MODEL_SUFFIXES = ('.xml', '.urdf')
_USD_SUFFIXES = ('.usd', '.usda', '.usdc', '.usdz')


@BaseRobot.register('JetbotRobot')
class JetbotRobot(BaseRobot):
    """Two velocity-driven wheels and a caster; stops when no wheel command arrives in a step,
    unless wheel targets applied between steps hold (:meth:`servo_targets_applied`)."""

    base_body = 'chassis'
    #: The model scales uniformly (``RobotCfg.scale=(s, s, s)``; see :mod:`internutopia_extension.robots.scaling`).
    supports_scale = True

    @property
    def root_offset(self) -> tuple[float, float, float]:
        """The chassis rides 3.5 cm (times the scale) above the robot's root frame, which is on the
        ground (as in InternUtopia's Jetbot asset): ``position=(x, y, 0)`` rests on the floor."""
        return (0.0, 0.0, 0.035 * uniform_factor(self.config.scale, f'robot {self.name!r}'))
    joint_names = ['left_wheel_joint', 'right_wheel_joint']
    wheel_actuators = ('left_wheel_joint', 'right_wheel_joint')
    #: The wheel joints, left then right (InternUtopia's ``WheeledRobot(wheel_dof_names=...)``): a
    #: slot's robot object (``robots[name]`` of ``env.runner.current_tasks``, an upstream-style
    #: subclass's ``self``) has a wheeled ``articulation`` over them (``get_wheel_positions()``,
    #: ``apply_wheel_actions(...)``: :mod:`internutopia.per_slot.wheeled`).
    wheel_dof_names = ('left_wheel_joint', 'right_wheel_joint')
    actuated_joints = ['left_wheel_joint', 'right_wheel_joint']

    def build_spec(self) -> mujoco.MjSpec:
        spec = load_spec(self._model_path())
        return scale_spec(spec, uniform_factor(self.config.scale, f'robot {self.name!r}'))

    def _model_path(self) -> str:
        """The MJCF to load: ``usd_path`` when it names a MuJoCo model, else the built-in one.

        InternUtopia's ``JetbotRobotCfg.usd_path`` is its Isaac Sim asset (``.../jetbot.usd``), which
        MuJoCo cannot load: a USD path means the built-in model, as it does for H1 and G1."""
        path = self.config.usd_path
        if not path or str(path).lower().endswith(_USD_SUFFIXES):
            return str(own_asset_path('robots', 'jetbot.xml'))
        if not str(path).lower().endswith(_MODEL_SUFFIXES) or not os.path.isfile(path):
            problem = 'no such file' if str(path).lower().endswith(_MODEL_SUFFIXES) else 'not a model file'
            raise ValueError(f'robot {self.name!r}: usd_path {str(path)!r}: {problem}; give a MuJoCo model file '
                             f'({", ".join(_MODEL_SUFFIXES)}), or None (or an Isaac Sim .usd path) for the built-in Jetbot')
        return str(path)

    def __init__(self, config, env_num, sim) -> None:
        super().__init__(config, env_num, sim)
        #: Per slot, the wheel targets applied between env steps and held since (see
        #: :meth:`servo_targets_applied`); ``_holding`` marks the slots holding some.
        self._held_wheels = np.zeros((env_num, len(self.wheel_actuators)))
        self._holding = np.zeros(env_num, dtype=bool)
        self._any_held = False

    def bind(self, world, slots) -> None:
        super().bind(world, slots)
        self._wheel_ctrl = self.ids(self.slots[:1], 'actuator', list(self.wheel_actuators))[0]
        first, last = int(self._wheel_ctrl.min()), int(self._wheel_ctrl.max())
        # Adjacent wheel actuators (the usual case) are one slice of ctrl columns: no gather.
        self._wheel_columns = slice(first, last + 1) if last - first + 1 == len(self._wheel_ctrl) else None

    def reset_slots(self, slots, configs) -> None:
        super().reset_slots(slots, configs)
        self._release(np.asarray(slots, dtype=np.intp))

    def episode_ended(self, slot: int) -> None:
        self._release(np.array([slot], dtype=np.intp))
        super().episode_ended(slot)

    def _release(self, slots: np.ndarray) -> None:
        """Forget the held wheel targets of ``slots`` (a new episode)."""
        self._holding[slots] = False

    def servo_targets_applied(self, slot: int, actuators: np.ndarray | None = None) -> None:
        """Told by a slot's articulation (InternUtopia's ``apply_action``, ``apply_wheel_actions``)
        that it wrote wheel targets of ``slot`` (``actuators``: the ones written; every servo of
        the Jetbot is a wheel's). In a step's command phase (a per-slot robot's
        ``apply_action``, a controller's ``ArticulationAction``) they are that step's command, as
        a controller's are: the wheels stop on a later step given no command. Given between
        steps (a script, a task's hook), they stay, as Isaac Sim's drive targets do, until a
        command of a later step replaces them (or another applied between steps, or the episode ends)."""
        if in_command_phase():
            self._holding[slot] = False  # (this step's command replaces a held one)
            return
        self._held_wheels[slot] = self.bound_world.data.ctrl[slot, self._wheel_ctrl]
        self._holding[slot] = True
        self._any_held = True

    def quiet_steps(self, limit: int) -> int:
        """Every step of an action repeat: :meth:`begin_step` stops the wheels (or sets the held
        targets), and the command the controller applies again after it sets them as they were
        (a wheel given no command is stopped, or held, already)."""
        return limit

    def begin_step(self) -> None:
        slots = self.slots
        if not len(slots):
            return
        world = self.world
        assert world is not None  # bound: it has slots
        data = world.data
        held = self._held_slots(data.ctrl) if self._any_held else None
        if self._wheel_columns is not None:
            data.ctrl[rows_of(slots, self.env_num), self._wheel_columns] = 0.0
        else:
            data.ctrl[slots[:, None], self._wheel_ctrl] = 0.0
        if held is not None and len(held):
            data.ctrl[held[:, None], self._wheel_ctrl] = self._held_wheels[held]

    def _held_slots(self, ctrl: np.ndarray) -> np.ndarray:
        """The slots whose wheel targets applied between steps still hold: those of the group's
        slots whose targets no command of the last step replaced (a command that changed them)."""
        held = np.flatnonzero(self._holding)
        held = held[np.isin(held, self.slots)]
        replaced = np.any(ctrl[held[:, None], self._wheel_ctrl] != self._held_wheels[held], axis=1)
        self._holding[held[replaced]] = False
        held = held[~replaced]
        self._any_held = bool(self._holding.any())
        return held
