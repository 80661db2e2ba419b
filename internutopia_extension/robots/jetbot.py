"""Jetbot: a small differential-drive robot (MJCF written in this project)."""

from __future__ import annotations

import os

import mujoco

from internutopia.core.robot.base import BaseRobot, rows_of
from internutopia_extension.robots.assets import load_spec, own_asset_path
from internutopia_extension.robots.scaling import scale_spec, uniform_factor

_MODEL_SUFFIXES = ('.xml', '.urdf')
_USD_SUFFIXES = ('.usd', '.usda', '.usdc', '.usdz')


@BaseRobot.register('JetbotRobot')
class JetbotRobot(BaseRobot):
    """Two velocity-driven wheels and a caster; stops when no wheel command arrives in a step."""

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

    def bind(self, world, slots) -> None:
        super().bind(world, slots)
        self._wheel_ctrl = self.ids(self.slots[:1], 'actuator', list(self.wheel_actuators))[0]
        first, last = int(self._wheel_ctrl.min()), int(self._wheel_ctrl.max())
        # Adjacent wheel actuators (the usual case) are one slice of ctrl columns: no gather.
        self._wheel_columns = slice(first, last + 1) if last - first + 1 == len(self._wheel_ctrl) else None

    def quiet_steps(self, limit: int) -> int:
        """Every step of an action repeat: :meth:`begin_step` stops the wheels, and the command
        the controller applies again after it sets them as they were (a wheel given no command
        is stopped already)."""
        return limit

    def begin_step(self) -> None:
        if not len(self.slots):
            return
        world = self.world
        assert world is not None  # bound: it has slots
        if self._wheel_columns is not None:
            world.data.ctrl[rows_of(self.slots, self.env_num), self._wheel_columns] = 0.0
        else:
            world.data.ctrl[self.slots[:, None], self._wheel_ctrl] = 0.0
