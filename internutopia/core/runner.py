"""The runner: slots, episodes, entity groups, tasks and metrics around one physics world.

:class:`Runner` implements the semantics of ``vec_env.Env`` (see DESIGN.md) without its argument
checking: the env validates, the runner does. Per step, work is done per *group* (all slots that
share a robot, controller, task or metric), never per slot, except building the per-slot dicts.
"""

from __future__ import annotations

import time
from enum import IntEnum
from typing import Any, Iterable, Optional

import numpy as np

from internutopia.core.backend.mujoco.world import MujocoWorld, SlotPart
from internutopia.core.config import Config, TaskCfg
from internutopia.core.episode_queue import Episode, EpisodeQueue
from internutopia.core.metric.base import BaseMetric
from internutopia.core.object.base import BaseObject
from internutopia.core.results import ResultsWriter
from internutopia.core.robot.base import BaseRobot, Entity
from internutopia.core.scene import entity_key, scene_spec, structure_key
from internutopia.core.task.base import BaseTask


class SlotStatus(IntEnum):
    """Lifecycle of an env slot."""

    EMPTY = 0
    ACTIVE = 1
    DONE = 2


def split_rows(tree: Any, count: int) -> list[Any]:
    """Split a nested dict of arrays with a leading ``count`` axis into ``count`` per-row dicts."""
    if isinstance(tree, dict):
        columns = {key: split_rows(value, count) for key, value in tree.items()}
        return [{key: rows[i] for key, rows in columns.items()} for i in range(count)]
    return list(tree)


class Runner:
    """Owns the world and everything placed in it; see :class:`internutopia.core.vec_env.Env`."""

    def __init__(self, config: Config, episodes: Optional[Iterable[TaskCfg]] = None, queue: Optional[EpisodeQueue] = None) -> None:
        self.config = config
        self.env_num = config.env_num
        self.sim = config.simulator
        self.queue = queue if queue is not None else EpisodeQueue(episodes if episodes is not None else config.task_configs)
        self.world = MujocoWorld(config.simulator, config.env_num, config.env_offset_size)
        self.status = np.full(self.env_num, SlotStatus.EMPTY, dtype=np.int8)
        self.episodes: list[Optional[Episode]] = [None] * self.env_num
        self.structures: list[Optional[str]] = [None] * self.env_num
        self.steps = np.zeros(self.env_num, dtype=np.int64)
        self.started_at = np.zeros(self.env_num)
        self.robot_groups: dict[str, BaseRobot] = {}
        self.object_groups: dict[str, BaseObject] = {}
        self.slot_robots: list[dict[str, BaseRobot]] = [{} for _ in range(self.env_num)]
        self.slot_objects: list[dict[str, BaseObject]] = [{} for _ in range(self.env_num)]
        self.tasks: dict[str, BaseTask] = {}
        self.slot_task: list[Optional[BaseTask]] = [None] * self.env_num
        self.metrics: dict[str, BaseMetric] = {}
        self.slot_metrics: list[list[BaseMetric]] = [[] for _ in range(self.env_num)]
        self.results = ResultsWriter(config.metrics_save_path)
        self.world_steps = 0

    # ------------------------------------------------------------------------------------------
    # reset
    def _check_episode(self, episode: Episode) -> None:
        """Resolve every registered type of an episode up front, so a bad one changes nothing."""
        task = episode.config
        where = f'task_configs[{episode.index}]'
        BaseTask.registry.get(task.type, where)
        for m, metric in enumerate(task.metrics):
            BaseMetric.registry.get(metric.type, f'{where}.metrics[{m}]')
        for r, robot in enumerate(task.robots):
            BaseRobot.registry.get(robot.type, f'{where}.robots[{r}]')
        for o, obj in enumerate(task.objects):
            BaseObject.registry.get(obj.type, f'{where}.objects[{o}]')

    def reset(self, slots: list[int]) -> list[Optional[Episode]]:
        """Give each of ``slots`` (validated, distinct) the next episode, in order."""
        taken: list[Optional[Episode]] = []
        try:
            for _ in slots:
                episode = self.queue.next()
                taken.append(episode)
                if episode is not None:
                    self._check_episode(episode)
        except Exception:
            self.queue.put_back([e for e in taken if e is not None])
            raise
        new_structures = list(self.structures)
        for slot, episode in zip(slots, taken):
            new_structures[slot] = structure_key(episode.config) if episode is not None else None
        try:
            if new_structures != self.structures or self.world.model is None:
                self._rebuild(slots, taken, new_structures)
        except Exception:
            self.queue.put_back([e for e in taken if e is not None])
            raise
        for slot, episode in zip(slots, taken):
            self._start_episode(slot, episode)
        self.world.forward()
        return taken

    def _rebuild(self, slots: list[int], taken: list[Optional[Episode]], new_structures: list[Optional[str]]) -> None:
        reset = np.zeros(self.env_num, dtype=bool)
        reset[slots] = True
        configs: list[Optional[TaskCfg]] = [e.config if e is not None else None for e in self.episodes]
        for slot, episode in zip(slots, taken):
            configs[slot] = episode.config if episode is not None else None
        # Groups are keyed by name and structure; a slot keeps its group objects (and so its
        # controller state) whenever its robot's structure is unchanged.
        robot_members: dict[str, list[int]] = {}
        object_members: dict[str, list[int]] = {}
        robot_groups = dict(self.robot_groups)
        object_groups = dict(self.object_groups)
        slot_robots: list[dict[str, BaseRobot]] = [{} for _ in range(self.env_num)]
        slot_objects: list[dict[str, BaseObject]] = [{} for _ in range(self.env_num)]
        parts: list[list[SlotPart]] = [[] for _ in range(self.env_num)]
        for slot, task in enumerate(configs):
            if task is None:
                continue
            parts[slot].append(SlotPart('scene/', scene_spec(task)))
            for members, groups, slot_map, entities, factory in (
                (robot_members, robot_groups, slot_robots, task.robots, BaseRobot.create),
                (object_members, object_groups, slot_objects, task.objects, BaseObject.create),
            ):
                for entity in entities:
                    key = entity.name + '|' + entity_key(entity)
                    if key not in groups:
                        groups[key] = factory(entity, self.env_num, self.sim, where=f'slot {slot}')
                    members.setdefault(key, []).append(slot)
                    slot_map[slot][entity.name] = groups[key]
                    parts[slot].append(SlotPart(f'{entity.name}/', groups[key].spec()))
        keep = ~reset & np.array([s is not None for s in self.structures])
        self.world.build(parts, keep=keep)
        self.robot_groups = {k: g for k, g in robot_groups.items() if k in robot_members}
        self.object_groups = {k: g for k, g in object_groups.items() if k in object_members}
        for groups, members in ((self.robot_groups, robot_members), (self.object_groups, object_members)):
            for key, group in groups.items():
                group.bind(self.world, np.array(members[key]))
        self.slot_robots, self.slot_objects = slot_robots, slot_objects
        self.structures = new_structures

    def _start_episode(self, slot: int, episode: Optional[Episode]) -> None:
        self._leave_groups(slot)
        self.episodes[slot] = episode
        self.steps[slot] = 0
        if episode is None:
            self.status[slot] = SlotStatus.EMPTY
            return
        task = episode.config
        self.world.reset_slot_state(slot)
        slot_array = np.array([slot])
        for entity in task.robots:
            self.slot_robots[slot][entity.name].reset_slots(slot_array, [entity])
        for entity in task.objects:
            self.slot_objects[slot][entity.name].reset_slots(slot_array, [entity])
        task_object = self.tasks.get(task.type)
        if task_object is None:
            task_object = self.tasks[task.type] = BaseTask.registry.get(task.type)(self)
        self.slot_task[slot] = task_object
        self.world.forward()
        task_object.reset_slot(slot, task)
        self.slot_metrics[slot] = []
        for metric_cfg in task.metrics:
            key = metric_cfg.model_dump_json()
            metric = self.metrics.get(key)
            if metric is None:
                metric = self.metrics[key] = BaseMetric.registry.get(metric_cfg.type)(metric_cfg, self)
            metric.reset_slot(slot, task)
            self.slot_metrics[slot].append(metric)
        self.status[slot] = SlotStatus.ACTIVE
        self.started_at[slot] = time.perf_counter()

    def _leave_groups(self, slot: int) -> None:
        self.slot_task[slot] = None
        self.slot_metrics[slot] = []

    # ------------------------------------------------------------------------------------------
    # step
    def parse_actions(self, actions: list[Any]) -> dict[int, tuple[Any, list[int], list[Any]]]:
        """Validate every active slot's action; group parsed args by controller. Changes nothing."""
        commands: dict[int, tuple[Any, list[int], list[Any]]] = {}
        for slot in np.flatnonzero(self.status == SlotStatus.ACTIVE):
            entry = actions[slot]
            if entry is None:
                continue
            if not isinstance(entry, dict):
                raise ValueError(f'action[{slot}] must be a dict {{robot_name: {{controller_name: args}}}} or None; '
                                 f'got {type(entry).__name__}')
            robots = self.slot_robots[slot]
            for robot_name, controller_actions in entry.items():
                robot = robots.get(robot_name)
                if robot is None:
                    raise ValueError(f'action[{slot}]: unknown robot {robot_name!r}; robots in env {slot}: {sorted(robots)}')
                if controller_actions is None:
                    continue
                if not isinstance(controller_actions, dict):
                    raise ValueError(f'action[{slot}][{robot_name!r}] must be a dict {{controller_name: args}}; '
                                     f'got {type(controller_actions).__name__}')
                for controller_name, args in controller_actions.items():
                    controller = robot.controllers.get(controller_name)
                    if controller is None:
                        raise ValueError(f'action[{slot}][{robot_name!r}]: unknown controller {controller_name!r}; '
                                         f'controllers of {robot_name!r}: {sorted(robot.controllers)}')
                    try:
                        parsed = controller.parse_action(args)
                    except ValueError as exc:
                        raise ValueError(f'action[{slot}][{robot_name!r}][{controller_name!r}]: {exc}') from None
                    entry_ = commands.setdefault(id(controller), (controller, [], []))
                    entry_[1].append(int(slot))
                    entry_[2].append(parsed)
        return commands

    def step(self, actions: list[Any]) -> tuple[list, list, list, list, list]:
        """One env step: apply actions, one physics step, task logic, per-slot results."""
        commands = self.parse_actions(actions)
        for group in self.robot_groups.values():
            group.begin_step()
        for controller, slots, parsed in commands.values():
            controller.apply(np.array(slots, dtype=np.intp), controller.batch(parsed))
        for group in self.robot_groups.values():
            group.before_physics()
        self.world.step()
        self.world_steps += 1

        active = np.flatnonzero(self.status == SlotStatus.ACTIVE)
        self.steps[active] += 1
        reward = np.zeros(self.env_num)
        terminated = np.zeros(self.env_num, dtype=bool)
        truncated = np.zeros(self.env_num, dtype=bool)
        for task in self.tasks.values():
            slots = np.array([s for s in active if self.slot_task[s] is task], dtype=np.intp)
            if len(slots):
                reward[slots], terminated[slots], truncated[slots] = task.step(slots)
        for metric in self.metrics.values():
            slots = np.array([s for s in active if metric in self.slot_metrics[s]], dtype=np.intp)
            if len(slots):
                metric.update(slots)

        obs = self.observe(active)
        n = self.env_num
        obs_out: list = [None] * n
        reward_out: list = [None] * n
        terminated_out: list = [None] * n
        truncated_out: list = [None] * n
        info_out: list = [None] * n
        for row, slot in enumerate(active):
            obs_out[slot] = obs[row]
            reward_out[slot] = float(reward[slot])
            terminated_out[slot] = bool(terminated[slot])
            truncated_out[slot] = bool(truncated[slot])
            info = {'episode_index': self.episodes[slot].index, 'steps': int(self.steps[slot])}
            if terminated[slot] or truncated[slot]:
                info['metrics'] = self._finish(slot, bool(terminated[slot]), bool(truncated[slot]))
            info_out[slot] = info
        return obs_out, reward_out, terminated_out, truncated_out, info_out

    def _finish(self, slot: int, terminated: bool, truncated: bool) -> dict[str, Any]:
        metrics = {metric.name: metric.calc(slot) for metric in self.slot_metrics[slot]}
        episode = self.episodes[slot]
        self.results.write({
            'episode_index': episode.index,
            'slot': slot,
            'task_type': episode.config.type,
            'scene': episode.config.scene_asset_path,
            'metrics': metrics,
            'steps': int(self.steps[slot]),
            'terminated': terminated,
            'truncated': truncated,
            'wall_time_s': round(time.perf_counter() - self.started_at[slot], 6),
        })
        self.status[slot] = SlotStatus.DONE
        return metrics

    # ------------------------------------------------------------------------------------------
    # observations
    def observe(self, slots: np.ndarray) -> list[dict[str, Any]]:
        """Per-slot observation dicts for ``slots``: ``{robot_name: {...}}``."""
        out: list[dict[str, Any]] = [{} for _ in slots]
        if not len(slots):
            return out
        row_of = np.full(self.env_num, -1, dtype=np.intp)
        row_of[slots] = np.arange(len(slots))
        for group in self.robot_groups.values():
            members = group.slots[row_of[group.slots] >= 0]
            if not len(members):
                continue
            for slot, robot_obs in zip(members, split_rows(group.get_obs(members), len(members))):
                out[row_of[slot]][group.name] = robot_obs
        for task in self.tasks.values():
            members = np.array([s for s in slots if self.slot_task[s] is task], dtype=np.intp)
            extra = task.get_observations(members) if len(members) else {}
            if extra:
                for slot, task_obs in zip(members, split_rows(extra, len(members))):
                    out[row_of[slot]].update(task_obs)
        return out

    def entities_of(self, slot: int) -> dict[str, Entity]:
        """Robots and objects present in ``slot``, by name."""
        return {**self.slot_objects[slot], **self.slot_robots[slot]}

    def close(self) -> None:
        """Release the world and flush the results file."""
        self.results.close()
        self.world.close()
