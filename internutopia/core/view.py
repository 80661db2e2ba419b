"""What tasks, metrics and rewards see of the env: :class:`EnvView`, narrower than the runner.

A task, metric or reward object is built with an :class:`EnvView` and serves every slot whose
episode uses it. Through the view it reads, and never changes:

- the slot count (``env_num``), the physics step (``physics_dt``) and each slot's step count
  (``steps``);
- each slot's robots and objects by name (:meth:`EnvView.robots`, :meth:`EnvView.objects`): entity
  *groups*, each one named robot or object in every slot of one structure (see
  :class:`~internutopia.core.entity.Entity`), read for many slots at once;
- the world's arrays: a group's ``world`` is its :class:`~internutopia.core.backend.interface.Pack`
  (``pack.model``, ``pack.data``), also reachable per slot with :meth:`EnvView.pack`;
- :attr:`EnvView.version`, which changes whenever slots change packs: caches of which slot is in
  which group compare it (:class:`EntityTracker` does);
- the task, task config and episode index of each slot, and object observations.

Per-slot access (one slot's robots, step count and observations) is :meth:`EnvView.slot`, a
:class:`EnvSlot`; the per-slot adapters for upstream-style extensions are built on it. See
``docs/extensions.md`` for how the built-in tasks and metrics use the view.

Arrays follow one convention: shapes are given as ``Shape (env_num, ...)`` when indexed by slot
id, ``Shape (len(slots), ...)`` when one row per slot of an argument ``slots``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack
    from internutopia.core.config import SimConfig, TaskCfg
    from internutopia.core.entity import Entity
    from internutopia.core.object.base import BaseObject
    from internutopia.core.robot.base import BaseRobot

__all__ = ['EntityTracker', 'EnvSlot', 'EnvView', 'GroupSource', 'SlotSource']

NO_GROUP = -1


class SlotSource(Protocol):
    """The per-slot state an :class:`EnvView` reads (the runner's slot table; extensions never see it)."""

    env_num: int
    steps: np.ndarray
    slot_robots: list[dict[str, BaseRobot]]
    slot_objects: list[dict[str, BaseObject]]
    slot_task: list[Any]
    slot_metrics: list[list[Any]]
    episodes: list[Any]

    def active_slots(self) -> np.ndarray: ...


class GroupSource(Protocol):
    """The entity groups an :class:`EnvView` reads (the runner's groups; extensions never see them)."""

    robots: dict[str, BaseRobot]
    objects: dict[str, BaseObject]


#: ``observe(groups, slots)``: per slot of ``slots``, ``{entity_name: obs}`` from ``groups``.
ObserveEntities = Callable[[Iterable['Entity'], np.ndarray], list[dict[str, Any]]]


class EnvView:
    """The env as its tasks, metrics and rewards see it: slots, their entities, counters, arrays.

    Built once per env by the runner; every read is live (it reflects the current step and the
    current placement of slots in packs). Nothing here changes the env.

    Attributes:
        env_num: number of env slots; per-slot arrays have this length.
        physics_dt: seconds of one physics step (one env step).
        simulator: the run's :class:`~internutopia.core.config.SimConfig`.
        observed_entries: while an array observation is taken for a caller that reads only some
            of it (``step_arrays(observe_only=...)``), those entries (top-level key -> the names
            of its children, or ``None`` for all of it); else ``None``. A hint: a task whose
            observations cost (per-slot object dicts) may leave out what nobody reads.
    """

    __slots__ = ('_groups', '_observe', '_slots', '_steps', '_world', 'env_num', 'observed_entries', 'physics_dt',
                 'simulator')

    def __init__(self, slots: SlotSource, groups: GroupSource, world: Any, sim: SimConfig, observe: ObserveEntities) -> None:
        self._slots = slots
        self._groups = groups
        self._world = world
        self._observe = observe
        self.env_num: int = slots.env_num
        self.simulator: SimConfig = sim
        self.physics_dt: float = float(sim.physics_dt)
        self.observed_entries: dict[str, frozenset[str] | None] | None = None
        steps = slots.steps.view()
        steps.flags.writeable = False
        self._steps = steps

    # -- counters ----------------------------------------------------------------------------
    @property
    def steps(self) -> np.ndarray:
        """Env steps the current episode of each slot has run, the current step included.

        Shape (env_num,), int64, read-only and live: ``steps[slots]`` inside a task's ``step`` is
        1 on an episode's first step. Rows of done and empty slots keep their last value.
        """
        return self._steps

    @property
    def version(self) -> int:
        """A counter that changes whenever slots change packs (and so entity groups are rebound).

        Tables of which slot is in which group stay valid while it is unchanged.
        """
        return self._world.version

    def active_slots(self) -> np.ndarray:
        """Ids of the slots running an episode, sorted. Shape (k,), read-only."""
        return self._slots.active_slots()

    # -- per slot ----------------------------------------------------------------------------
    def robots(self, slot: int) -> Mapping[str, BaseRobot]:
        """The robots of ``slot``'s episode, by name (each an entity group spanning its pack's slots)."""
        return MappingProxyType(self._slots.slot_robots[slot])

    def objects(self, slot: int) -> Mapping[str, BaseObject]:
        """The objects of ``slot``'s episode, by name (entity groups, as :meth:`robots`)."""
        return MappingProxyType(self._slots.slot_objects[slot])

    def robot(self, slot: int, name: str) -> BaseRobot:
        """Robot ``name`` of ``slot``; ``ValueError`` naming the slot's robots if it has none by that name."""
        robot = self._slots.slot_robots[slot].get(name)
        if robot is None:
            raise ValueError(f'env {slot} has no robot {name!r}; robots in env {slot}: {sorted(self._slots.slot_robots[slot])}')
        return robot

    def object(self, slot: int, name: str) -> BaseObject:
        """Object ``name`` of ``slot``; ``ValueError`` naming the slot's objects if it has none by that name."""
        obj = self._slots.slot_objects[slot].get(name)
        if obj is None:
            raise ValueError(f'env {slot} has no object {name!r}; objects in env {slot}: {sorted(self._slots.slot_objects[slot])}')
        return obj

    def task(self, slot: int) -> Any:
        """The task object running ``slot``'s episode (``None`` for a done or empty slot)."""
        return self._slots.slot_task[slot]

    def metrics(self, slot: int) -> list[Any]:
        """The metric objects of ``slot``'s episode (each serves every slot listing its config)."""
        return list(self._slots.slot_metrics[slot])

    def task_config(self, slot: int) -> TaskCfg | None:
        """The ``TaskCfg`` of ``slot``'s current or last episode (``None`` if it never had one)."""
        episode = self._slots.episodes[slot]
        return episode.config if episode is not None else None

    def episode_index(self, slot: int) -> int | None:
        """Queue index of ``slot``'s current or last episode (``None`` if it never had one)."""
        episode = self._slots.episodes[slot]
        return episode.index if episode is not None else None

    def episode_seed(self, slot: int) -> int | None:
        """What the random draws of ``slot``'s current or last episode key on (``None`` if it
        never had one): its queue index, or, when the queue was started from a seed (a Gymnasium
        env's ``reset(seed=...)``), a hash of that seed and the index
        (:attr:`~internutopia.core.episode_queue.Episode.seed`). Draws keyed on it depend on the
        episode alone, never on the slot it runs in or on what runs beside it."""
        episode = self._slots.episodes[slot]
        return episode.seed if episode is not None else None

    def pack(self, slot: int) -> Pack | None:
        """The :class:`~internutopia.core.backend.interface.Pack` holding ``slot`` (its model
        and ``(env_num, ...)`` arrays), ``None`` for an empty slot."""
        return self._world.pack(slot)

    def origin(self, slot: int) -> np.ndarray:
        """Where ``slot`` is drawn in the world (its grid origin): world = env-local + origin. Shape (3,)."""
        return np.array(self._world.origins[slot], dtype=float)

    def origins_of(self, slots: Any) -> np.ndarray:
        """:meth:`origin` of each of ``slots``, in one array ``(len(slots), 3)``."""
        return np.asarray(self._world.origins, dtype=float)[np.asarray(slots, dtype=np.intp).reshape(-1)]

    def slot(self, slot: int) -> EnvSlot:
        """A view of one slot (see :class:`EnvSlot`)."""
        if not 0 <= int(slot) < self.env_num:
            raise ValueError(f'env id {slot} is out of range; valid env ids: 0..{self.env_num - 1}')
        return EnvSlot(self, int(slot))

    # -- groups ------------------------------------------------------------------------------
    def robot_groups(self) -> list[BaseRobot]:
        """Every robot group in the world (one per robot name and structure in use)."""
        return list(self._groups.robots.values())

    def object_groups(self) -> list[BaseObject]:
        """Every object group in the world (one per object name and structure in use)."""
        return list(self._groups.objects.values())

    def tracker(self, kind: Literal['robot', 'object'] = 'robot') -> EntityTracker:
        """A new :class:`EntityTracker` following one named robot (or object) per slot."""
        return EntityTracker(self, kind)

    # -- observations ------------------------------------------------------------------------
    def object_observations(self, slots: np.ndarray) -> list[dict[str, dict[str, Any]]]:
        """Per slot of ``slots`` (sorted, distinct), ``{object_name: {'position', 'orientation', ...}}``.

        Each object group gathers its rows once; only the per-slot dicts are built per slot.
        A slot without objects gets ``{}``.
        """
        return self._observe(self._groups.objects.values(), np.asarray(slots, dtype=np.intp))

    def robot_observations(self, slots: np.ndarray) -> list[dict[str, dict[str, Any]]]:
        """Per slot of ``slots`` (sorted, distinct), ``{robot_name: obs}`` as in ``obs[i]`` of a step
        (the robots' own entries, without the task's)."""
        return self._observe(self._groups.robots.values(), np.asarray(slots, dtype=np.intp))


class EnvSlot:
    """One slot of an :class:`EnvView`: its robots and objects, step count, episode, observations.

    Cheap to make (``view.slot(i)``) and live like the view. Reads of a single slot cost a
    group's per-row overhead, so vectorized code reads many slots through the groups instead.
    """

    __slots__ = ('_view', 'slot')

    def __init__(self, view: EnvView, slot: int) -> None:
        self._view = view
        self.slot = slot

    @property
    def env(self) -> EnvView:
        """The view of the whole env."""
        return self._view

    @property
    def steps(self) -> int:
        """Env steps of the slot's current episode (its current step included)."""
        return int(self._view.steps[self.slot])

    @property
    def robots(self) -> Mapping[str, BaseRobot]:
        """The slot's robots by name (entity groups; index their arrays with this slot)."""
        return self._view.robots(self.slot)

    @property
    def objects(self) -> Mapping[str, BaseObject]:
        """The slot's objects by name (entity groups)."""
        return self._view.objects(self.slot)

    @property
    def task_config(self) -> TaskCfg | None:
        """The slot's current or last episode's ``TaskCfg``."""
        return self._view.task_config(self.slot)

    @property
    def episode_index(self) -> int | None:
        """The slot's current or last episode's queue index."""
        return self._view.episode_index(self.slot)

    @property
    def episode_seed(self) -> int | None:
        """What the slot's current or last episode's random draws key on (:meth:`EnvView.episode_seed`)."""
        return self._view.episode_seed(self.slot)

    @property
    def pack(self) -> Pack | None:
        """The pack holding the slot (``None`` when empty): ``pack.data.qpos[slot]`` is its state."""
        return self._view.pack(self.slot)

    def pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Env-local position ``(3,)`` and wxyz orientation ``(4,)`` of robot or object ``name``'s base."""
        entity = self._view._slots.slot_robots[self.slot].get(name) or self._view._slots.slot_objects[self.slot].get(name)
        if entity is None:
            names = sorted({**self._view._slots.slot_robots[self.slot], **self._view._slots.slot_objects[self.slot]})
            raise ValueError(f'env {self.slot} has no robot or object {name!r}; names in env {self.slot}: {names}')
        position, orientation = entity.poses(np.array([self.slot], dtype=np.intp))
        return position[0], orientation[0]

    def robot_observations(self) -> dict[str, dict[str, Any]]:
        """``{robot_name: obs}`` of this slot, as in a step's ``obs[slot]`` (without task entries)."""
        return self._view.robot_observations(np.array([self.slot], dtype=np.intp))[0]

    def object_observations(self) -> dict[str, dict[str, Any]]:
        """``{object_name: obs}`` of this slot."""
        return self._view.object_observations(np.array([self.slot], dtype=np.intp))[0]

    def __repr__(self) -> str:
        return f'EnvSlot(slot={self.slot}, robots={sorted(self.robots)}, objects={sorted(self.objects)})'


#: Splits of slot arrays :meth:`EntityTracker.groups` keeps (a step asks for a few).
_SPLITS_KEPT = 8


class EntityTracker:
    """One named robot (or object) per slot, read for many slots at once, group by group.

    A task or metric calls :meth:`track` when a slot starts an episode, then reads all its slots
    with :meth:`positions` / :meth:`poses`, or any array through :meth:`groups`. Slots of one
    task may hold different structures (different packs, so different groups); the slot -> group
    table is rebuilt only when :attr:`EnvView.version` changed, never per step.

    Attributes:
        group_of: index into :attr:`group_list` of each slot's group, ``-1`` where none is
            tracked. Shape (env_num,), intp.
        group_list: the groups tracked slots are in (in first-seen order).
    """

    def __init__(self, view: EnvView, kind: Literal['robot', 'object'] = 'robot') -> None:
        if kind not in ('robot', 'object'):
            raise ValueError(f"EntityTracker kind must be 'robot' or 'object'; got {kind!r}")
        self.view = view
        self.kind = kind
        self.names: list[str | None] = [None] * view.env_num
        self.group_of = np.full(view.env_num, NO_GROUP, dtype=np.intp)
        self.group_list: list[Entity] = []
        self._version = -1
        self._one_group: bool | None = None  # every slot tracked in group 0 (None: not known since a change)
        #: :meth:`groups`' answers by the slots asked (their bytes), until a slot's group changes.
        self._splits: dict[bytes, list[tuple[Entity, np.ndarray, np.ndarray]]] = {}
        self._position_rows: tuple[tuple[np.ndarray, np.ndarray], np.ndarray] | None = None  # (pose views, their read-only positions)

    def _table(self) -> Sequence[Mapping[str, Entity]]:
        source = self.view._slots
        return source.slot_robots if self.kind == 'robot' else source.slot_objects

    def track(self, slot: int, name: str) -> None:
        """Follow ``name`` in ``slot`` from now on; ``ValueError`` naming the slot's robots (objects) if absent."""
        entity = self.view.robot(slot, name) if self.kind == 'robot' else self.view.object(slot, name)
        self.refresh()
        held = int(self.group_of[slot])
        if self.names[slot] == name and held != NO_GROUP and self.group_list[held] is entity:
            return  # (a new episode in the same slot and group: the usual reset; every answer kept holds)
        self.names[slot] = name
        index = next((k for k, group in enumerate(self.group_list) if group is entity), None)
        if index is None:
            index = len(self.group_list)
            self.group_list.append(entity)
        self.group_of[slot] = index
        # Still one group when there was one and this slot joins it (a reset in the usual world);
        # else found again when next asked.
        self._one_group = True if self._one_group and index == 0 else None
        self._splits.clear()

    def name(self, slot: int) -> str | None:
        """The name followed in ``slot`` (``None`` if none)."""
        return self.names[slot]

    def entity(self, slot: int) -> Entity:
        """The group of the entity followed in ``slot``."""
        name = self.names[slot]
        if name is None:
            raise KeyError(f'slot {slot} follows no {self.kind}')
        return self._table()[slot][name]

    def refresh(self) -> None:
        """Rebuild the slot -> group table if slots changed packs since the last call (cheap otherwise)."""
        version = self.view.version
        if version == self._version:
            return
        index: dict[int, int] = {}
        self.group_list = []
        self._one_group = None
        self._splits.clear()
        table = self._table()
        for slot, name in enumerate(self.names):
            entity = table[slot].get(name) if name is not None else None
            if entity is None:
                self.group_of[slot] = NO_GROUP
                continue
            if id(entity) not in index:
                index[id(entity)] = len(self.group_list)
                self.group_list.append(entity)
            self.group_of[slot] = index[id(entity)]
        self._version = version

    def groups(self, slots: np.ndarray) -> Iterator[tuple[Entity, np.ndarray, np.ndarray]]:
        """``(group, rows, members)`` for each group among ``slots``' tracked entities.

        ``members = slots[rows]`` are the slots of ``slots`` whose entity is ``group``; ``rows``
        index the caller's per-slot results. Slots with nothing tracked are skipped. With several
        groups the split of the same slots is kept until a slot's group changes (a world of several
        scenes asks it a few times per physics step): read ``rows`` and ``members``, never write them.
        """
        self.refresh()
        slots = np.asarray(slots, dtype=np.intp)
        one = self._one_group
        if one is None:
            one = self._one_group = len(self.group_list) == 1 and bool(np.all(self.group_of == 0))
        if one and len(slots):  # (the usual case, decided once per change: every slot in one group)
            yield self.group_list[0], np.arange(len(slots)), slots
            return
        key = slots.tobytes()
        split = self._splits.get(key)
        if split is None:
            which = self.group_of[slots]
            if len(self.group_list) == 1 and len(slots) and np.all(which == 0):
                yield self.group_list[0], np.arange(len(slots)), slots
                return
            split = []
            for index in np.unique(which[which != NO_GROUP]).tolist():
                rows = np.flatnonzero(which == index)
                split.append((self.group_list[index], rows, slots[rows]))
            if len(self._splits) >= _SPLITS_KEPT:
                self._splits.clear()
            self._splits[key] = split
        yield from split

    def only_group(self) -> Entity | None:
        """The group followed in every slot, when one is (the usual world: one robot per slot, one
        structure); else ``None`` (then read through :meth:`groups`). Decided once per change."""
        self.refresh()
        if self._one_group is None:
            self._one_group = len(self.group_list) == 1 and bool(np.all(self.group_of == 0))
        return self.group_list[0] if self._one_group else None

    def position_rows(self) -> np.ndarray | None:
        """The base positions of every slot, indexed by slot: a read-only view ``(env_num, 3)`` of
        the state (what :meth:`positions` copies), or ``None`` unless one group is followed in
        every slot and its pose is read from the state (then use :meth:`positions`).

        For compiled per-step loops that read a few slots' positions: no copy, one argument. It
        shows the state as it is when read (valid until the next step or reset writes it).
        """
        group = self.only_group()
        views = group.pose_views if group is not None else None
        if views is None:
            return None
        cached = self._position_rows
        if cached is None or cached[0] is not views:  # (made once per group binding)
            rows = views[0].view()
            rows.flags.writeable = False
            cached = self._position_rows = (views, rows)
        return cached[1]

    def position_column(self) -> int | None:
        """The ``qpos`` column where :meth:`position_rows` starts, when they are a free root's
        ``qpos`` columns (then :meth:`recorded_positions` serves); else ``None``."""
        group = self.only_group()
        return group.root_qpos_column if group is not None and group.pose_views is not None else None

    def recorded_positions(self, qpos: np.ndarray) -> np.ndarray:
        """The base positions of every slot after each physics step of a recorded call, indexed
        by slot: a view ``(env_num, count, 3)`` of ``qpos`` (a
        :class:`~internutopia.core.task.base.RecordedSteps`' record). Only where
        :meth:`position_column` is not ``None`` (``ValueError`` otherwise)."""
        column = self.position_column()
        if column is None:
            raise ValueError('recorded_positions: the followed robots\' positions are not free-root qpos columns '
                             '(several groups, or a mocap or fixed root); check position_column() first')
        return qpos[:, :, column:column + 3]

    def poses(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Env-local base positions and wxyz orientations. Shapes (len(slots), 3) and (len(slots), 4)."""
        self.refresh()
        slots = np.asarray(slots, dtype=np.intp)
        if len(self.group_list) == 1:
            return self.group_list[0].poses(slots)
        position, orientation = np.zeros((len(slots), 3)), np.zeros((len(slots), 4))
        for group, rows, members in self.groups(slots):
            position[rows], orientation[rows] = group.poses(members)
        return position, orientation

    def positions(self, slots: np.ndarray) -> np.ndarray:
        """Env-local base positions. Shape (len(slots), 3)."""
        self.refresh()
        if len(self.group_list) == 1:
            return self.group_list[0].positions(slots)
        out = np.zeros((len(slots), 3))
        for group, rows, members in self.groups(slots):
            out[rows] = group.positions(members)
        return out
