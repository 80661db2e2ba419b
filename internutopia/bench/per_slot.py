"""The per-slot benchmark case: a Jetbot and a task written InternUtopia's way (one object per slot).

The same workload as the ``jetbot`` case (the same path, ``move_along_path``), but the robot and
the task are upstream-style classes run through the per-slot adapters (``docs/extensions.md``):
the robot's ``apply_action`` and ``get_obs`` and the task's ``is_done`` and ``get_observations``
run in Python once per slot per step. Comparing its rows with the ``jetbot`` rows shows what the
per-slot way costs per step. Not in the default run: ``--robots jetbot-per-slot --api dict``.
"""

from __future__ import annotations

from typing import Any

from internutopia.bench.case import Case, endless_config, register_case, sensors_for
from internutopia.core.config.robot import RobotCfg
from internutopia.core.config.task import TaskCfg
from internutopia.core.robot.robot import BaseRobot
from internutopia.core.task import BaseTask
from internutopia_extension.robots.jetbot import JetbotRobot

PATH = [(0.5, 0.0, 0.0), (0.5, 0.5, 0.0), (1.0, 1.0, 0.0)]


class PerSlotJetbotCfg(RobotCfg):
    """An upstream-style Jetbot (see :class:`PerSlotJetbot`)."""

    name: str = 'jetbot'
    type: str = 'BenchPerSlotJetbot'


class PerSlotTaskCfg(TaskCfg):
    """An upstream-style endless task (see :class:`PerSlotTask`)."""

    type: str = 'BenchPerSlotTask'


# Written as InternUtopia's users write them: against the per-slot API (SlotRobot, SlotTask) that
# registration puts between these classes and their vectorized bases. The type checker sees the
# bases as written, so the per-slot signatures are marked where they differ from the vectorized ones.
@BaseRobot.register('BenchPerSlotJetbot')
class PerSlotJetbot(JetbotRobot):
    """Counts its actions and passes them on; observes what a Jetbot observes, plus the count."""

    def __init__(self, config: Any, scene: Any) -> None:
        super().__init__(config, scene)  # type: ignore[call-arg]  # SlotRobot.__init__(config, scene)
        self.actions = 0

    def apply_action(self, action: dict) -> None:
        self.actions += 1
        super().apply_action(action)  # type: ignore[misc]  # SlotRobot.apply_action

    def get_obs(self) -> Any:  # type: ignore[override]  # SlotRobot.get_obs()
        obs = dict(super().get_obs())  # type: ignore[call-arg]
        obs['actions'] = self.actions
        return obs


@BaseTask.register('BenchPerSlotTask')
class PerSlotTask(BaseTask):
    """Never ends; adds its step count to the robot's observation."""

    steps: int  # SlotTask's

    def get_observations(self) -> dict:  # type: ignore[override]  # SlotTask.get_observations()
        obs = super().get_observations()  # type: ignore[call-arg]
        obs['jetbot']['task_steps'] = self.steps
        return obs

    def is_done(self) -> bool:
        return False


def _config(env_num: int, cameras: str) -> Any:
    from internutopia_extension.configs.robots.jetbot import jetbot_camera_cfg, move_along_path_cfg, move_by_speed_cfg

    robot = PerSlotJetbotCfg(controllers=[move_by_speed_cfg, move_along_path_cfg],
                             sensors=sensors_for(cameras, jetbot_camera_cfg))
    return endless_config(PerSlotTaskCfg(robots=[robot]), env_num)


def _array_action(env_num: int) -> dict:
    raise ValueError('the per-slot case runs through the dict API only (per-slot robots take one action dict per slot)')


CASE = register_case(Case('jetbot-per-slot', 'jetbot following the same short path, robot and task written per slot '
                          "(InternUtopia's way, through the per-slot adapters)", _config,
                          lambda env_num: [{'jetbot': {'move_along_path': [PATH]}}] * env_num, _array_action,
                          robot='jetbot', default=False, apis=('dict',)))

__all__ = ['CASE', 'PerSlotJetbot', 'PerSlotJetbotCfg', 'PerSlotTask', 'PerSlotTaskCfg']
