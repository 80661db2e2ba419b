"""InternUtopia's per-instance task methods, mixed into :class:`~internutopia.core.task.base.BaseTask`.

A task object built InternUtopia's way, ``cls(config, scene)``, is one slot's episode (see
:mod:`internutopia.core.task.slot`): it has the slot's robots and objects by name
(``self.robots[name]`` are per-slot robot objects, ``self.objects[name]`` bodies), its metrics
(``self.metrics``), its reward (``self.reward``) and its step count (``self.steps``), and these methods.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from internutopia.core.view import EnvView


class SlotMetrics(Mapping):
    """The metrics of one slot's episode by name, as per-slot objects (``calc()``), read live."""

    def __init__(self, view: EnvView, slot: int) -> None:
        self._view = view
        self._slot = slot

    def _objects(self) -> dict[str, Any]:
        return {metric.name: metric.slot_metric(self._slot) for metric in self._view.metrics(self._slot)}

    def __getitem__(self, name: str) -> Any:
        return self._objects()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._objects())

    def __len__(self) -> int:
        return len(self._view.metrics(self._slot))


class SlotTaskMixin:
    """One slot's episode, InternUtopia's way; see the module docstring."""

    # Attributes of one slot's episode (set by _init_slot), as InternUtopia's tasks have them.
    name: Any
    config: Any
    env_id: int
    env_offset: list[float]
    root_path: str
    scene_prim: Any
    robots: OrderedDict
    objects: OrderedDict
    scene_rigid_bodies: dict[str, Any]
    metrics: Mapping
    reward: Any
    steps: int
    work: bool
    loaded: bool

    def _init_slot(self, config: Any, scene: Any) -> None:
        from internutopia.core.robot.rigid_body import IRigidBody

        view, slot = scene.view, scene.slot
        self.name = None
        self.env_id = slot
        self.env_offset = list(scene.env_offset)
        self.root_path = f'/World/env_{slot}'
        self.scene_prim = None
        self._scene = scene
        self.config = config
        self.robots = OrderedDict((name, group.slot_instance(slot)) for name, group in view.robots(slot).items())
        self.objects = OrderedDict((name, IRigidBody(group, slot, None, origin=scene.origin, name=name))
                                   for name, group in view.objects(slot).items())
        self.scene_rigid_bodies: dict[str, Any] = {}
        self.metrics = SlotMetrics(view, slot)
        self.steps = 0
        self.work = True
        self.loaded = True
        self.reward = None
        if config.reward is not None:
            from internutopia.core.task.reward import create_reward

            self.reward = create_reward(config.reward, self)

    def set_up_runtime(self, task_name: Any, env_id: int, env_offset: list[float]) -> None:
        """Name the episode and record its slot and the slot's origin."""
        self.name = task_name
        self.env_id = env_id
        self.env_offset = list(env_offset)
        self.root_path = f'/World/env_{env_id}'

    def load(self) -> None:
        """Nothing to load: the env placed the episode's scene, robots and objects in the slot."""
        self.loaded = True

    def set_up_scene(self, scene: Any) -> None:
        """Keep the slot's scene (everything in it is placed already)."""
        self._scene = scene
        if not self.loaded:
            self.load()

    def is_done(self) -> bool:
        """Whether the episode is over (upstream-style tasks define it)."""
        raise NotImplementedError(f'{type(self).__name__}.is_done is not implemented')

    def calculate_metrics(self) -> dict[str, Any]:
        """``{metric name: value}`` of the episode's metrics."""
        return {name: metric.calc() for name, metric in self.metrics.items()}

    def update_metrics(self) -> None:
        """The env updates the metrics every step; nothing to do."""

    def pre_step(self, time_step_index: int, simulation_time: float) -> None:
        """Count a step (the env keeps ``steps`` itself for its tasks)."""
        self.steps += 1

    def post_reset(self) -> None:
        """Called once the episode's start state is in place: the robots' ``post_reset``."""
        self.steps = 0
        for robot in self.robots.values():
            robot.post_reset()

    def cleanup(self) -> None:
        """Called when the slot's episode is replaced: the robots' ``cleanup``."""
        for robot in self.robots.values():
            robot.cleanup()

    def save_info(self) -> None:
        """Nothing to save: resetting one slot leaves every other slot's state as it was."""

    def restore_info(self) -> None:
        """Nothing to restore (see :meth:`save_info`)."""

    def save_robot_info(self) -> None:
        """Nothing to save (see :meth:`save_info`)."""

    def clear_rigid_bodies(self) -> None:
        """Nothing to clear: a slot's bodies go with its episode."""


__all__ = ['SlotMetrics', 'SlotTaskMixin']
