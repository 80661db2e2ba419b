"""Tasks one slot at a time: InternUtopia's task API next to our vectorized tasks.

- An upstream-style task class (``cls(config, scene)`` with ``is_done()``, ``get_observations()``,
  ``calculate_metrics()``) is run by a :class:`SlotTaskAdapter`, a vectorized task holding one
  instance per slot and episode: every step it asks each instance ``is_done()`` (``terminated``),
  its reward's ``calc()`` (``reward``) and ``get_observations()`` (the slot's observation), and its
  ``calculate_metrics()`` when the episode ends.
- A built-in task seen from one slot (``env.runner.current_tasks[name]``) is a
  :class:`SlotTaskView` with the same attributes.

Both are :class:`SlotTask` objects: they have the slot's robots and objects by name
(``self.robots[name]`` are per-slot robot objects, ``self.objects[name]`` bodies), its metrics
(``self.metrics``), its reward (``self.reward``) and its step count (``self.steps``).
"""

from __future__ import annotations

import numbers
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from internutopia.core.runner.failures import each_slot
from internutopia.core.task.base import BaseTask
from internutopia.core.util.caller import warn_per_episode
from internutopia.core.util.trees import row
from internutopia.core.view import EnvView
from internutopia.per_slot.instances import SlotStateListener
from internutopia.per_slot.metric import metric_in_slot, upstream_entry
from internutopia.per_slot.reward import check_slot_reward, create_reward
from internutopia.per_slot.rigid_body import IRigidBody
from internutopia.per_slot.robot import robot_in_slot
from internutopia.per_slot.robot_episode import end_robot, mark_ended, robots_start_with_task, robots_started, start_robot
from internutopia.per_slot.scene import SlotScene, task_name
from internutopia.per_slot.style import instance_class, is_per_slot, make_instance, with_api

#: Methods only InternUtopia-style (per-slot) task classes define.
PER_SLOT_TASK_METHODS = ('is_done', 'calculate_metrics', 'set_up_scene', 'load', 'pre_step', 'post_reset', 'set_up_runtime')
#: How a per-slot task class is told apart (see :func:`~internutopia.per_slot.style.is_per_slot`).
TASK_MARKS = (PER_SLOT_TASK_METHODS, ('get_observations',), ('scene',))

#: What InternUtopia's built-in tasks have that a subclass of their twin here reads, by class name:
#: ``({attribute: config key}, {attribute: live value of (the built-in behind, slot)})``. The config
#: values are set by ``__init__``; the live ones are read each time until the instance sets its own
#: (upstream's ``FiniteStepTask`` counts ``stop_count`` from 1 in ``is_done``, its
#: ``ManipulationTask`` ``step_counter``: the episode's steps here).
UPSTREAM_TASK_ATTRIBUTES: dict[str, tuple[dict[str, str], dict[str, Callable[[Any, int], Any]]]] = {
    'FiniteStepTask': ({'max_steps': 'max_steps'}, {'stop_count': lambda task, slot: int(task.view.steps[slot]) + 1}),
    'ManipulationTask': ({'max_steps': 'max_steps', 'prompt': 'prompt'},
                         {'step_counter': lambda task, slot: int(task.view.steps[slot])}),
    'SingleInferenceTask': ({}, {}),
}


class SlotMetrics(Mapping):
    """The metrics of one slot's episode by name, as per-slot objects (``calc()``), read live."""

    def __init__(self, view: EnvView, slot: int) -> None:
        self._view = view
        self._slot = slot

    def _objects(self) -> dict[str, Any]:
        return {metric.name: metric_in_slot(metric, self._slot) for metric in self._view.metrics(self._slot)}

    def __getitem__(self, name: str) -> Any:
        return self._objects()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._objects())

    def __len__(self) -> int:
        return len(self._view.metrics(self._slot))


class SlotTask:
    """InternUtopia's per-instance task: one slot's episode, built as ``cls(config, scene)``."""

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
    #: Where the class builds on a built-in task (``class GpsTask(FiniteStepTask)``), the adapter
    #: running that built-in for every slot (set before ``__init__``): the default ``is_done()`` and
    #: ``get_observations()`` give the built-in's results for this slot, as its upstream twin would.
    runner_of_slot: Any = None
    #: Whether ``__init__`` makes the episode's reward (``self.reward``), as InternUtopia's does:
    #: for the tasks the env runs (a built-in task seen from a slot has the env's).
    _makes_reward = True

    def __init__(self, config: Any, scene: Any) -> None:
        view, slot = scene.view, scene.slot
        self.name = None
        self.env_id = slot
        self.env_offset = list(scene.env_offset)
        self.root_path = f'/World/env_{slot}'
        self.scene_prim = None
        self._scene = scene
        self.config = config
        self.robots = OrderedDict((name, robot_in_slot(group, slot)) for name, group in view.robots(slot).items())
        self.objects = OrderedDict((name, IRigidBody(group, slot, None, origin=scene.origin, name=name))
                                   for name, group in view.objects(slot).items())
        self.scene_rigid_bodies: dict[str, Any] = {}
        self.metrics = SlotMetrics(view, slot)
        self.steps = 0
        self.work = True
        #: False until :meth:`load` ran: :meth:`set_up_scene` calls it once, as InternUtopia's does,
        #: so a task class's own ``load()`` (``super().load()`` then its set-up) runs.
        self.loaded = False
        #: The episode's reward (a per-slot reward object): the env's reward adapter sets it when the
        #: episode starts, after the task (see :class:`~internutopia.per_slot.reward.SlotRewardAdapter`).
        self.reward = None
        if config.reward is not None and self.runner_of_slot is None:  # (a built-in behind takes its own rewards)
            check_slot_reward(config.reward)
            if self._makes_reward:  # (InternUtopia's BaseTask.__init__ makes it; the env's reward adapter takes it)
                self.reward = create_reward(config.reward, self)
        if self.runner_of_slot is not None:  # (a class built on a built-in: its upstream twin's attributes)
            for attribute, key in upstream_entry(self.runner_of_slot, UPSTREAM_TASK_ATTRIBUTES)[0].items():
                setattr(self, attribute, getattr(config, key, None))

    def __getattr__(self, name: str) -> Any:
        # (only for names not found otherwise: the live attributes of a built-in's upstream twin)
        runner = self.__dict__.get('runner_of_slot')
        live = upstream_entry(runner, UPSTREAM_TASK_ATTRIBUTES)[1].get(name) if runner is not None else None
        if live is None:
            raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r}')
        return live(runner, self.__dict__['env_id'])

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
        """Whether the episode is over: upstream-style tasks define it; one built on a built-in
        task gets the built-in's verdict for this step (it ended the episode, either way)."""
        if self.runner_of_slot is None:
            raise NotImplementedError(f'{type(self).__name__}.is_done is not implemented')
        return bool(self.runner_of_slot.builtin_ended[self.env_id])

    def get_observations(self) -> dict[str, Any]:
        """``{robot_name: robot.get_obs()}`` of the episode's robots (those that observe something),
        and, for a task built on a built-in task, the built-in's own entries (a goal, ...)."""
        obs = {}
        for name, robot in self.robots.items():
            robot_obs = robot.get_obs()
            if robot_obs:
                obs[name] = robot_obs
        if self.runner_of_slot is not None:
            obs.update(self.runner_of_slot.builtin_observation(self.env_id))
        return obs

    def calculate_metrics(self) -> dict[str, Any]:
        """``{metric name: value}`` of the episode's metrics."""
        return {name: metric.calc() for name, metric in self.metrics.items()}

    def update_metrics(self) -> None:
        """The env updates the metrics every step; nothing to do."""

    def pre_step(self, time_step_index: int, simulation_time: float) -> None:
        """Called once every env step, after the physics step and before the step's observations
        and ``is_done()``, and on each physics step of ``env.warm_up`` (as Isaac Sim's world
        calls it): counts ``steps`` (the episode's steps so far, as InternUtopia counts them)."""
        self.steps += 1

    def post_reset(self) -> None:
        """Called once the episode's start state is in place: the robots' ``post_reset`` (each
        robot's runs once per episode: not again for a robot started already)."""
        self.steps = 0
        for robot in self.robots.values():
            start_robot(robot)

    def cleanup(self) -> None:
        """Called once when the slot's episode is over (the reset that replaces it, or empties the
        slot): the robots' ``cleanup``, each once."""
        for robot in self.robots.values():
            end_robot(robot)

    def save_info(self) -> None:
        """Nothing to save: resetting one slot leaves every other slot's state as it was."""

    def restore_info(self) -> None:
        """Nothing to restore (see :meth:`save_info`)."""

    def save_robot_info(self) -> None:
        """Nothing to save (see :meth:`save_info`)."""

    def clear_rigid_bodies(self) -> None:
        """Nothing to clear: a slot's bodies go with its episode."""


class SlotTaskAdapter(BaseTask):
    """Runs the upstream-style task class ``instance_class`` in every slot whose episode is of its type.

    Where the class builds on a built-in task, the adapter stands in front of that built-in
    (:func:`~internutopia.per_slot.style.adapter_class`): the built-in starts and steps every slot
    as on its own, its reward is the step's, and its flags are the episode's unless the class
    decides with its own ``is_done()`` (then ``terminated`` is that).
    """

    #: A subclass of a built-in task is run with the built-in behind this adapter.
    runs_builtins = True
    #: The built-in task behind (set on the class :func:`~internutopia.per_slot.style.adapter_class` makes).
    builtin_class: type | None = None

    #: Observations are per-slot dicts, not arrays.
    array_api = False
    #: InternUtopia's task makes its metrics in its ``__init__``: the runner starts them first.
    reads_metrics_at_start = True
    #: The instance's ``get_observations()`` is the slot's whole observation, its robots' entries
    #: included (InternUtopia's): the runner does not observe the slot's robot groups apart.
    replaces_robot_observations = True

    def __init__(self, view: EnvView, instance_class: type) -> None:
        super().__init__(view)
        self.instance_class = instance_class
        self.instances: dict[int, Any] = {}
        #: ``{slot: ((step, sim time), observations, error)}``: each instance's ``get_observations()``
        #: runs once a step, however many readers (the step's observations, the slot's metrics) ask
        #: for it; again after physics outside a step (a warm-up) or a state set by hand.
        self._observed: dict[int, tuple[tuple[int, float], Any, Exception | None]] = {}
        #: Told by the slot's robot and object groups when a slot's state is set by hand.
        self._state_listener = SlotStateListener(self._observed)
        #: Slots whose instance said ``is_done()`` on the latest step.
        self.done = np.zeros(view.env_num, dtype=bool)
        #: Slots whose episode the built-in task behind ended on the latest step.
        self.builtin_ended = np.zeros(view.env_num, dtype=bool)
        #: Whether the class ends its episodes itself (its own ``is_done()``) rather than the built-in behind.
        self._decides_end = self.builtin_class is None or getattr(instance_class, 'is_done', None) is not SlotTask.is_done

    def reset_slot(self, slot: int, config: Any) -> None:
        super().reset_slot(slot, config)
        self.episode_ended(slot)  # (the slot's last episode's instance, if its end was not told)
        groups: list[Any] = [*self.view.robots(slot).values(), *self.view.objects(slot).values()]
        for group in groups:
            group.add_listener(self._state_listener)
        scene = SlotScene(self.view, slot)
        # As InternUtopia: the robots' post_reset runs in the task's (once), not when they are built.
        token = robots_start_with_task()
        try:
            instance = make_instance(self.instance_class, self, config, scene)
            instance.set_up_runtime(task_name(self.view, slot), slot, scene.env_offset)
            instance.set_up_scene(scene)
            instance.post_reset()
        finally:
            robots_started(token)
        for group in self.view.robots(slot).values():  # (a task whose post_reset did not start them all)
            start_robot(robot_in_slot(group, slot))
        self.instances[slot] = instance
        self._observed.pop(slot, None)
        self.done[slot] = self.builtin_ended[slot] = False

    def episode_ended(self, slot: int) -> None:
        """``slot``'s episode is over (the reset that replaces it or empties the slot): its instance's
        ``cleanup()`` runs, once, and with it (InternUtopia's ``BaseTask.cleanup``) its robots'; the
        instance goes. A ``cleanup`` that raises is a warning: the reset goes on."""
        self._observed.pop(slot, None)
        instance = self.instances.pop(slot, None)
        if instance is None:
            return
        try:
            instance.cleanup()
        except Exception as exc:
            # (a text per slot and error: shown each time, kept in no module's __warningregistry__)
            warn_per_episode(f'{type(instance).__name__}.cleanup() in env {slot} raised {type(exc).__name__}: {exc}')
        finally:
            for robot in dict(getattr(instance, 'robots', None) or {}).values():
                mark_ended(robot)  # (cleaned up by the task's cleanup, or left alone by it, as InternUtopia)

    def reset_slots(self, slots: np.ndarray, configs: Any) -> None:
        # (one slot at a time, each instance made: a built-in behind that starts slots in one call
        # leaves each as its reset_slot would, which the adapter's reset_slot calls)
        BaseTask.reset_slots(self, slots, configs)

    def quiet_steps(self, slots: np.ndarray, limit: int) -> int:
        return 0  # (every step asks each instance: pre_step, get_observations, is_done)

    def warm_up_step(self, slots: np.ndarray) -> None:
        """A warm-up physics step (``env.warm_up``): each instance's ``pre_step``, as Isaac Sim's
        world calls it on every one of its steps, warm-up ones included (InternUtopia's
        ``BaseTask.pre_step`` counts ``steps``; InternManip's task then ends at ``max_step`` sooner)."""
        if self.builtin_class is not None:
            super().warm_up_step(slots)
        steps = self.view.steps
        for slot in np.asarray(slots).tolist():
            instance = self.instances.get(slot)
            if instance is not None:
                instance.pre_step(int(steps[slot]), float(steps[slot]) * self.view.physics_dt)

    def combined_step(self, rewards: Any, metrics: Any) -> None:
        return None  # (the instances run every step; a built-in behind steps alone)

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # (the reward of the episode's config is the runner's, a SlotRewardAdapter; a built-in's own is kept)
        reward, terminated, truncated = np.zeros(len(slots)), np.zeros(len(slots), dtype=bool), np.zeros(len(slots), dtype=bool)
        if self.builtin_class is not None:
            reward, ended_by, truncated_by = (np.array(part) for part in super().step(slots))
            self.builtin_ended[slots] = ended_by | truncated_by
            if not self._decides_end:
                terminated, truncated = ended_by.astype(bool), truncated_by.astype(bool)
        steps = self.view.steps
        result = reward, terminated, truncated  # (a slot that raises: not terminated)
        decides = self._decides_end

        def one(index: int, slot: int) -> None:
            instance = self.instances[slot]
            # InternUtopia's world calls each task's pre_step once a step (it counts ``steps``; a
            # task may count more itself, as InternManip's does in is_done).
            instance.pre_step(int(steps[slot]), float(steps[slot]) * self.view.physics_dt)
            # InternUtopia reads a step's observations before it asks is_done() (tasks may decide in
            # get_observations); the observations are kept for the step's obs and metrics.
            self.observation(slot)
            if decides:
                terminated[index] = _as_bool(instance.is_done(), instance, 'is_done', slot)

        try:
            each_slot(slots, one, result)
        finally:
            self.done[slots] = terminated | truncated
        return result

    def builtin_observation(self, slot: int) -> dict[str, Any]:
        """The built-in task's own observation entries for ``slot`` (``{}`` without one)."""
        if self.builtin_class is None:
            return {}
        extra = super().get_observations(np.array([slot], dtype=np.intp))
        return row(extra, 0) if extra else {}

    def observation(self, slot: int) -> Any:
        """``slot``'s instance's ``get_observations()`` for the current step (computed once a step;
        again once the slot's simulation moved outside a step, or its state was set by hand)."""
        pack = self.view.pack(slot)
        step = (int(self.view.steps[slot]), float(pack.data.time[slot]) if pack is not None else 0.0)
        held = self._observed.get(slot)
        if held is None or held[0] != step:
            try:
                instance = self.instances[slot]
                observed = instance.get_observations()
                if not isinstance(observed, Mapping):
                    raise TypeError(f'{type(instance).__name__}.get_observations() in env {slot} returned '
                                    f'{type(observed).__name__}; expected a dict ({{robot_name: robot_obs, ...}})')
                self._mark_render(slot, observed)
            except Exception as exc:  # (kept: asked again this step, the same error, no second call)
                self._observed[slot] = (step, None, exc)
                raise
            held = self._observed[slot] = (step, observed, None)
        if held[2] is not None:
            raise held[2]
        return held[1]

    def _mark_render(self, slot: int, observed: Any) -> None:
        """Give each robot entry InternUtopia's ``render`` flag (its runner adds it to whatever a task observes)."""
        if not isinstance(observed, dict):
            return
        for name, group in self.view.robots(slot).items():
            entry = observed.get(name)
            if isinstance(entry, dict) and 'render' not in entry:
                entry['render'] = bool(group.render_steps(np.array([slot], dtype=np.intp))[0])

    def get_observations(self, slots: np.ndarray) -> Any:
        return [self.observation(slot) for slot in np.asarray(slots).tolist()]

    def episode_metrics(self, slot: int, metrics: dict[str, Any]) -> Any:
        """The metrics recorded for the episode ending in ``slot``: the instance's
        ``calculate_metrics()`` when its class defines one, else ``metrics`` (the env's)."""
        instance = self.instances.get(slot)
        if instance is not None and type(instance).calculate_metrics is not SlotTask.calculate_metrics:
            return instance.calculate_metrics()
        return super().episode_metrics(slot, metrics)  # (a built-in behind may compute its own)


def _as_bool(value: Any, instance: Any, method: str, slot: int) -> bool:
    """``value``, returned by ``instance.method()`` in ``slot``, as a bool: a bool (Python's or
    numpy's, or an array of none dimension) or an integer; anything else is a ``TypeError`` naming
    the class, method and env."""
    if isinstance(value, (bool, np.bool_, numbers.Integral)) or isinstance(value, np.ndarray) and value.ndim == 0 \
            and value.dtype.kind in 'biu':
        return bool(value)
    raise TypeError(f'{type(instance).__name__}.{method}() in env {slot} returned {type(value).__name__}; expected a bool')


# (A base made by a call, which mypy cannot follow: SlotTask's API in front of BaseTask.)
class SlotTaskView(with_api(SlotTask, BaseTask)):  # type: ignore[misc]
    """A built-in task's episode in one slot, with InternUtopia's task attributes and methods."""

    _makes_reward = False

    def __init__(self, task: BaseTask, slot: int) -> None:  # noqa: D107
        view = task.view
        scene = SlotScene(view, slot)
        SlotTask.__init__(self, view.task_config(slot), scene)
        self.group = task
        self.slot = int(slot)
        self.set_up_runtime(task_name(view, slot), slot, scene.env_offset)
        self.loaded = True  # (a built-in task's episode is in place when the view is made)

    def is_done(self) -> bool:
        """Whether the slot's episode has ended (the slot is no longer running it)."""
        return int(self.slot) not in self.group.view.active_slots().tolist()

    def get_observations(self) -> dict[str, Any]:
        """The slot's observation, as a step returns it (robots, and the task's own entries)."""
        out = self.group.view.slot(self.slot).robot_observations()
        extra = self.group.get_observations(np.array([self.slot], dtype=np.intp))
        if extra:
            out.update(row(extra, 0))
        return out

    def __repr__(self) -> str:
        return f'{type(self.group).__name__}({self.name!r}, env {self.slot})'


#: Per-slot views of built-in tasks: ``{task: {slot: (episode index, view)}}``.
_views: weakref.WeakKeyDictionary[BaseTask, dict[int, tuple[Any, SlotTaskView]]] = weakref.WeakKeyDictionary()


def task_in_slot(task: BaseTask, slot: int) -> Any:
    """``slot``'s episode of ``task`` as InternUtopia's per-slot task object (kept until the slot's next episode)."""
    if isinstance(task, SlotTaskAdapter):
        return task.instances[slot]
    views = _views.setdefault(task, {})
    episode = task.view.episode_index(slot)
    held = views.get(slot)
    if held is None or held[0] != episode:
        held = views[slot] = (episode, SlotTaskView(task, slot))
    return held[1]


def task_observations(view: EnvView, slot: int) -> Any:
    """What InternUtopia hands a metric's ``update`` after a step: the task's observations of
    ``slot`` (asked only on steps that do not end the episode; see :class:`~.metric.SlotMetricAdapter`)."""
    task = view.task(slot)
    if isinstance(task, SlotTaskAdapter):
        return task.observation(slot)
    if task is None:
        return view.slot(slot).robot_observations()
    return task_in_slot(task, slot).get_observations()


def create_task(config: Any, scene: Any) -> Any:
    """The per-slot task object of ``config`` in the scene's slot (InternUtopia's
    ``internutopia.core.task.task.create_task``).

    An upstream-style task class is instantiated (``cls(config, scene)``); for a task of this
    package the slot's running episode of that type is returned.

    Raises:
        ValueError: the slot runs no episode of ``config.type`` and the class is not upstream-style.
    """
    cls = BaseTask.registry.get(config.type)
    if is_per_slot(cls, BaseTask, *TASK_MARKS):
        # (mypy takes class objects for unhashable, python/mypy#11470: the cache's Hashable check)
        return instance_class(cls, SlotTask, BaseTask, TASK_MARKS)(config, scene)  # type: ignore[arg-type]
    task = scene.view.task(scene.slot)
    if task is None or type(task) is not cls:
        raise ValueError(f'env {scene.slot} runs no {config.type} episode: tasks of this package are created by the '
                         'env from task_configs (reset), not by create_task')
    return task_in_slot(task, scene.slot)


__all__ = ['PER_SLOT_TASK_METHODS', 'UPSTREAM_TASK_ATTRIBUTES', 'SlotMetrics', 'SlotTask', 'SlotTaskAdapter', 'SlotTaskView',
           'create_task', 'task_in_slot', 'task_observations']
