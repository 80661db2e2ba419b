"""InternUtopia's members of its vectorized env, read from the runners: the app handle, whether
the queue is done, the process count, the active episodes' configs, the queue as InternUtopia's
task config manager, the step's simulated time.

:class:`~internutopia.core.vec_env.Env` has them from :class:`UpstreamEnvMembers`; they hold no
state of their own (the manager is made on first use), so the env's own module keeps to the
contract's calls.

>>> from internutopia.core.config import Config
>>> from internutopia.core.vec_env import Env
>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
>>> task = FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()])
>>> env = Env(Config(env_num=2, metrics_save_path='none', task_configs=[task]))
>>> _ = env.reset()
>>> list(env.active_task_configs), env.proc_num, env.is_remote, bool(env.finished())
([0], 1, False, False)
>>> _ = env.step([None, None]); bool(env.finished())
True
>>> env.close(); env.simulation_app.is_running()
False
"""

from __future__ import annotations

from typing import Any

from internutopia.core.config import Config, TaskCfg
from internutopia.core.env_results import Finished
from internutopia.core.runner import RunnerSet
from internutopia.core.simulation_app import SimulationApp


class UpstreamEnvMembers:
    """InternUtopia's read-only members of ``vec_env.Env`` (its attributes, set by the env)."""

    _app: SimulationApp
    _config: Config
    _runners: RunnerSet
    _episode_list: list[TaskCfg] | None

    @property
    def simulation_app(self) -> SimulationApp:
        """Isaac Sim's app handle as scripts use it: ``is_running()`` is true until :meth:`close`."""
        return self._app

    @property
    def finished(self) -> Finished:
        """Whether the queue is empty and no slot is running an episode.

        Call it as InternUtopia does (``env.finished()``) or read it as a truth value
        (``if env.finished:``); both give the same answer.
        """
        return Finished(not self._runners.active_slots() and self._runners.queue_len() == 0)

    @property
    def queue_len(self) -> int:
        """Episodes still in the queue, not yet handed to a slot, requeued ones included (this
        package's; ``finished`` reads it)."""
        return self._runners.queue_len()

    @property
    def proc_num(self) -> int:
        """Number of runner processes (1: this env runs in this process; see ``DistributedEnv``)."""
        return 1

    @property
    def is_remote(self) -> bool:
        """Whether the slots run in other processes (Ray)."""
        return False

    @property
    def is_render(self) -> None:
        """InternUtopia's render flag of the env; it is never set there, so it is always ``None``."""
        return None

    @property
    def active_task_configs(self) -> dict[int, TaskCfg]:
        """``{env_id: TaskCfg}`` of the slots holding an episode (running, or ended and not yet reset)."""
        return self._runners.active_task_configs()

    @property
    def task_config_manager(self) -> Any:
        """The episode queue seen as InternUtopia's ``LocalTaskConfigManager``."""
        manager = self.__dict__.get('_task_config_manager')
        if manager is None:
            from internutopia.core.task_config_manager import LocalTaskConfigManager

            manager = self.__dict__['_task_config_manager'] = LocalTaskConfigManager.of_env(self)
        return manager

    def get_dt(self) -> float:
        """Seconds of simulated time one :meth:`step` advances (``config.simulator.physics_dt``)."""
        return self._config.simulator.physics_dt


__all__ = ['UpstreamEnvMembers']
