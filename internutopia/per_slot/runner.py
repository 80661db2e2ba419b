"""InternUtopia's ``SimulatorRunner`` members on the runner: ``env.runner.current_tasks`` and the like.

Scripts written for InternUtopia reach into ``env.runner``: ``current_tasks[name].robots[robot]``
(per-slot robot objects with ``articulation``, ``controllers`` and ``sensors``), ``get_obj(name)``,
``dt``. :class:`UpstreamRunner` is the runner with those members, built from its slots on each
access (cheap: the per-slot objects are made once per slot and episode and then reused);
``vec_env.Env`` runs one.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from internutopia.core.backend.clock import RenderClock
from internutopia.core.runner.runner import Runner
from internutopia.core.runner.slots import SlotStatus
from internutopia.per_slot.scene import SlotScene, task_name
from internutopia.per_slot.task import task_in_slot


class UpstreamRunner(Runner):
    """The runner with InternUtopia's ``SimulatorRunner`` members (see the module docstring)."""

    #: Set by the env: its ``simulation_app`` and ``task_config_manager``.
    simulation_app: Any = None
    task_config_manager: Any = None
    #: InternUtopia's bookkeeping attributes, kept for code that reads them.
    loop: bool = False
    metrics_config: Any = None
    render_trigger: int = 0
    #: This runner's id among the runners of a distributed env (0 in one process).
    runner_id: int = 0
    config: Any
    env_num: int

    @property
    def current_tasks(self) -> OrderedDict[str, Any]:
        """``{task_name: per-slot task object}`` of every slot holding an episode, in slot order.

        A task object has the slot's ``robots`` (per-slot robot objects: ``articulation``,
        ``controllers``, ``sensors``, ``get_obs()``), ``objects``, ``config``, ``env_id``, ``steps``
        and ``metrics``.
        """
        return OrderedDict((task_name(self.view, slot), task_in_slot(self.slot_task[slot], slot)) for slot in self.table.held_slots())

    @property
    def task_name_to_env_id_map(self) -> dict[str, int]:
        """``{task_name: env_id}`` of :attr:`current_tasks`."""
        return {task_name(self.view, slot): slot for slot in self.table.held_slots()}

    @property
    def env_id_to_task_name_map(self) -> dict[int, str]:
        """``{env_id: task_name}`` of :attr:`current_tasks`."""
        return {slot: name for name, slot in self.task_name_to_env_id_map.items()}

    @property
    def finished_tasks(self) -> set[str]:
        """Names of the episodes that ended and were not reset yet."""
        return {task_name(self.view, slot) for slot in self.table.held_slots() if self.status[slot] == SlotStatus.DONE}

    @property
    def dt(self) -> float:
        """Seconds of simulated time per step (``physics_dt``)."""
        return float(self.sim.physics_dt)

    @property
    def metrics_save_path(self) -> str:
        """Where episode records go (``Config.metrics_save_path``)."""
        return self.config.metrics_save_path

    @property
    def render_interval(self) -> int:
        """Physics steps between camera renders."""
        return RenderClock.of(self.sim).period

    def get_obs(self) -> list[Any]:
        """The current observation of every slot (``None`` where no episode runs)."""
        active = self.active_slots()
        observed = dict(zip(active.tolist(), self.observe(active), strict=True)) if len(active) else {}
        return [observed.get(slot) for slot in range(self.env_num)]

    def get_obj(self, name: str) -> Any:
        """Object (or robot) ``name`` of slot 0 as an :class:`~internutopia.per_slot.rigid_body.IRigidBody`."""
        return SlotScene(self.view, 0).get(name)

    def get_current_time_step_index(self) -> int:
        """Physics steps since the world was made."""
        return int(self.world_steps)

    def clear_single_task(self, task_name: str) -> None:
        """Nothing to clear: a slot's content is replaced when the slot is reset (``env.reset([slot])``)."""

    def world_clear(self) -> None:
        """Nothing to clear (see :meth:`clear_single_task`)."""

    def stop(self) -> None:
        """Nothing to stop: ``env.close()`` releases the world."""


__all__ = ['UpstreamRunner']
