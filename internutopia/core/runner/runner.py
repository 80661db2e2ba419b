"""The runner: slots, episodes, entity groups, tasks and metrics around one physics world.

:class:`Runner` implements the semantics of ``vec_env.Env`` (``docs/contract.md``) without its argument
checking: the env validates, the runner does. Per step, work is done per *group* (all slots that
share a robot, controller, task or metric), never per slot, except building the per-slot dicts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from internutopia.core.backend import get_backend
from internutopia.core.backend.mujoco.world import SlotPart
from internutopia.core.config import Config, TaskCfg
from internutopia.core.episode_queue import Episode, EpisodeQueue
from internutopia.core.metric.base import BaseMetric
from internutopia.core.object.base import BaseObject
from internutopia.core.results import ResultsWriter
from internutopia.core.reward.base import BaseReward
from internutopia.core.robot.base import BaseRobot, Entity
from internutopia.core.runner.actions import ActionParsing, Unbatched
from internutopia.core.runner.checks import check_episode
from internutopia.core.runner.observations import ObservationAssembly
from internutopia.core.runner.upstream import UpstreamRunnerMembers
from internutopia.core.scene import scene_spec, structure_key
from internutopia.core.task.base import BaseTask
from internutopia.core.util.memory import check_slots_fit
from internutopia.core.view import EnvView


@dataclass
class ArrayStep:
    """Result of :meth:`Runner.step_arrays` / ``vec_env.Env.step_arrays``: arrays over all slots.

    ``obs`` is ``{robot_name: {...}}`` with every leaf an array whose first axis is the slot id
    (rows of inactive slots are zeros); ``active`` marks the slots that ran an episode this step;
    ``metrics`` maps the slots whose episode ended on this step to that episode's metrics;
    ``diverged`` lists the slots whose episode ended because their simulation diverged.
    """

    obs: dict[str, Any]
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    active: np.ndarray
    metrics: dict[int, dict[str, Any]]
    diverged: tuple[int, ...] = ()


class SlotStatus(IntEnum):
    """Lifecycle of an env slot."""

    EMPTY = 0
    ACTIVE = 1
    DONE = 2


#: Bytes of the runner's per-slot lists and arrays (measured: about 260 for a one-robot task).
RUNNER_BYTES_PER_SLOT = 320

#: Metric objects kept while serving no slot (for the next episode with the same metric config).
_IDLE_METRICS_KEPT = 64

_ACTIVE = int(SlotStatus.ACTIVE)  # a plain int for per-step comparisons (enum lookups are slow)
_BASE_TASK_STEP = BaseTask.step  # tasks that keep it need no call per step


class Runner(ActionParsing, ObservationAssembly, UpstreamRunnerMembers):
    """Owns the world and everything placed in it; see :class:`internutopia.core.vec_env.Env`."""

    def __init__(self, config: Config, episodes: Iterable[TaskCfg] | None = None, queue: EpisodeQueue | None = None) -> None:
        check_slots_fit(config.env_num, RUNNER_BYTES_PER_SLOT, "the slots' bookkeeping")
        self.config = config
        self.env_num = config.env_num
        self.sim = config.simulator
        self.queue = queue if queue is not None else EpisodeQueue(episodes if episodes is not None else config.task_configs)
        #: The physics backend ``config.simulator.backend`` names, and the world it built.
        self.backend = get_backend(config.simulator.backend)
        self.world = self.backend.create_world(config.simulator, config.env_num, config.env_offset_size)
        self.status = np.full(self.env_num, SlotStatus.EMPTY, dtype=np.int8)
        self._active: np.ndarray | None = None  # cached ids of active slots; None when stale
        self.episodes: list[Episode | None] = [None] * self.env_num
        self.structures: list[str | None] = [None] * self.env_num
        self.steps = np.zeros(self.env_num, dtype=np.int64)
        self._one_step = np.ones(self.env_num, dtype=np.int64)
        self.started_at = np.zeros(self.env_num)
        self.robot_groups: dict[str, BaseRobot] = {}
        self.object_groups: dict[str, BaseObject] = {}
        self.slot_robots: list[dict[str, BaseRobot]] = [{} for _ in range(self.env_num)]
        self.slot_objects: list[dict[str, BaseObject]] = [{} for _ in range(self.env_num)]
        self.tasks: dict[str, BaseTask] = {}
        self.slot_task: list[BaseTask | None] = [None] * self.env_num
        self.metrics: dict[str, BaseMetric] = {}
        #: Rewards of task configs whose task does not compute them itself (one per distinct config).
        self.rewards: dict[str, BaseReward] = {}
        self.slot_metrics: list[list[BaseMetric]] = [[] for _ in range(self.env_num)]
        #: Which slots each task and metric object serves (boolean masks over slots).
        self.members: dict[int, np.ndarray] = {}
        self.results = ResultsWriter(config.metrics_save_path)
        self.world_steps = 0
        self._step_hooks_cache: tuple[dict[str, BaseRobot], list[Any], list[Any]] | None = None
        self._active_mask_cache: tuple[np.ndarray, np.ndarray] | None = None
        #: What tasks, metrics and rewards see of this runner (they are never given the runner).
        self.view = EnvView(self)

    # ------------------------------------------------------------------------------------------
    # reset
    def _check_episode(self, episode: Episode) -> None:
        """Resolve every registered type of an episode up front, so a bad one changes nothing."""
        check_episode(episode)

    def prepare(self, episodes: list[Episode | None]) -> None:
        """Do ahead, without changing any slot, all a reset with ``episodes`` could fail on.

        Every type is resolved, and every structure the world does not hold yet has its scene
        loaded and its model compiled (kept by the world for the reset) and its memory checked.
        A reset with these episodes right after compiles nothing. Used where a reset spans
        several runners (Ray): each prepares its share first, so one that fails leaves every
        runner as it was.

        Raises:
            ValueError: an unknown type, a scene or model that does not load, not enough memory.
        """
        for episode in episodes:
            if episode is None:
                continue
            self._check_episode(episode)
            task = episode.config
            where = f'task_configs[{episode.index}]'

            def parts(task: TaskCfg = task, where: str = where) -> list[SlotPart]:
                robots = {e.name: BaseRobot.create(e, self.env_num, self.sim, where=where) for e in task.robots}
                objects = {e.name: BaseObject.create(e, self.env_num, self.sim, where=where) for e in task.objects}
                return _slot_parts(task, robots, objects)

            self.world.prepare(structure_key(task), parts)

    def reset(self, slots: list[int]) -> list[Episode | None]:
        """Give each of ``slots`` (validated, distinct) the next episode, in order."""
        taken: list[Episode | None] = []
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
        for slot, episode in zip(slots, taken, strict=True):
            new_structures[slot] = structure_key(episode.config) if episode is not None else None
        try:
            if new_structures != self.structures or not self.world.built:
                self._rebuild(slots, taken, new_structures)
        except Exception:
            self.queue.put_back([e for e in taken if e is not None])
            raise
        # Nothing can fail from here on: the episodes these slots were running are abandoned.
        for slot in slots:
            if self.status[slot] == _ACTIVE:
                self._finish(slot, False, False, outcome='abandoned')
        # Write every reset slot's state first, then one forward pass for the whole world, then
        # start tasks and metrics (they read poses): a reset of k slots costs one forward, not k.
        for slot, episode in zip(slots, taken, strict=True):
            self._place_episode(slot, episode)
        self.world.forward(np.asarray(slots))
        for slot, episode in zip(slots, taken, strict=True):
            if episode is not None:
                self._start_episode(slot, episode)
        if len(self.metrics) > _IDLE_METRICS_KEPT:
            self._drop_idle_metrics()
        return taken

    def _drop_idle_metrics(self) -> None:
        """Forget metric objects that serve no slot: episodes whose metric configs all differ would
        otherwise leave one object (and its per-slot arrays) behind each."""
        for key, metric in list(self.metrics.items()):
            mask = self.members.get(id(metric))
            if mask is None or not mask.any():
                del self.metrics[key]
                self.members.pop(id(metric), None)

    def _rebuild(self, slots: list[int], taken: list[Episode | None], new_structures: list[str | None]) -> None:
        configs: list[TaskCfg | None] = [e.config if e is not None else None for e in self.episodes]
        for slot, episode in zip(slots, taken, strict=True):
            configs[slot] = episode.config if episode is not None else None
        # Groups are keyed by structure and name: every slot of a group lives in one pack (the
        # same model ids), and a slot keeps its group objects, and so its controller state, while
        # its episode's structure is unchanged.
        robot_members: dict[str, list[int]] = {}
        object_members: dict[str, list[int]] = {}
        robot_groups = dict(self.robot_groups)
        object_groups = dict(self.object_groups)
        slot_robots: list[dict[str, BaseRobot]] = [{} for _ in range(self.env_num)]
        slot_objects: list[dict[str, BaseObject]] = [{} for _ in range(self.env_num)]
        for slot, task in enumerate(configs):
            if task is None:
                continue
            for members, groups, slot_map, entities, factory in (
                (robot_members, robot_groups, slot_robots, task.robots, BaseRobot.create),
                (object_members, object_groups, slot_objects, task.objects, BaseObject.create),
            ):
                for entity in entities:
                    key = f'{new_structures[slot]}|{entity.name}'
                    if key not in groups:
                        groups[key] = factory(entity, self.env_num, self.sim, where=f'slot {slot}')
                        groups[key].env_view = self.view  # for the per-slot objects of upstream-style code
                    members.setdefault(key, []).append(slot)
                    slot_map[slot][entity.name] = groups[key]

        def parts_of(slot: int) -> list[SlotPart]:
            task = configs[slot]
            return _slot_parts(task, slot_robots[slot], slot_objects[slot]) if task is not None else []

        changed = self.world.place({slot: new_structures[slot] for slot in slots}, parts_of)
        self.robot_groups = {k: g for k, g in robot_groups.items() if k in robot_members}
        self.object_groups = {k: g for k, g in object_groups.items() if k in object_members}
        for groups, members in ((self.robot_groups, robot_members), (self.object_groups, object_members)):
            for key, group in groups.items():
                pack = self.world.pack(members[key][0])
                if pack.key in changed or group.world is not pack:
                    group.bind(pack, np.array(members[key]))
        self.slot_robots, self.slot_objects = slot_robots, slot_objects
        self.structures = new_structures

    def _place_episode(self, slot: int, episode: Episode | None) -> None:
        """Hand ``slot`` its episode and write its start state (no forward pass)."""
        self._leave_groups(slot)
        self.episodes[slot] = episode
        self.steps[slot] = 0
        if episode is None:
            self._set_status(slot, SlotStatus.EMPTY)
            return
        task = episode.config
        self.world.reset_slot_state(slot)
        slot_array = np.array([slot])
        for entity in task.robots:
            self.slot_robots[slot][entity.name].reset_slots(slot_array, [entity])
        for entity in task.objects:
            self.slot_objects[slot][entity.name].reset_slots(slot_array, [entity])

    def _start_episode(self, slot: int, episode: Episode) -> None:
        """Start the task and metrics of ``slot``'s episode (after its state was written and forwarded)."""
        task = episode.config
        task_object = self.tasks.get(task.type)
        if task_object is None:
            task_object = self.tasks[task.type] = BaseTask.create(task.type, self.view)
        self.slot_task[slot] = task_object
        self._member_mask(task_object)[slot] = True
        self.slot_metrics[slot] = []
        for metric_cfg in task.metrics:
            key = metric_cfg.model_dump_json()
            metric = self.metrics.get(key)
            if metric is None:
                metric = self.metrics[key] = BaseMetric.create(metric_cfg, self.view)
            self.slot_metrics[slot].append(metric)
        # The task first (an upstream-style task reads its metrics and robots when it starts), then
        # its metrics, then a reward of the config that the task does not compute itself.
        task_object.reset_slot(slot, task)
        for metric in self.slot_metrics[slot]:
            metric.reset_slot(slot, task)
            self._member_mask(metric)[slot] = True
        reward_cfg = getattr(task, 'reward', None)
        if reward_cfg is not None and not task_object.handles_reward:
            key = reward_cfg.model_dump_json()
            reward = self.rewards.get(key)
            if reward is None:
                reward = self.rewards[key] = BaseReward.create(reward_cfg, self.view, where=f'{task.type}.reward')
            reward.reset_slot(slot, task)
            self._member_mask(reward)[slot] = True
        self._set_status(slot, SlotStatus.ACTIVE)
        self.started_at[slot] = time.perf_counter()

    def _leave_groups(self, slot: int) -> None:
        self.slot_task[slot] = None
        self.slot_metrics[slot] = []
        for mask in self.members.values():
            mask[slot] = False

    def _member_mask(self, owner: Any) -> np.ndarray:
        mask = self.members.get(id(owner))
        if mask is None:
            mask = self.members[id(owner)] = np.zeros(self.env_num, dtype=bool)
        return mask

    def members_of(self, owner: Any, slots: np.ndarray) -> np.ndarray:
        """Those of ``slots`` that ``owner`` (a task or metric object) serves."""
        mask = self.members.get(id(owner))
        if mask is None:
            return slots[:0]
        member = mask[slots]
        return slots if np.count_nonzero(member) == len(slots) else slots[member]

    # ------------------------------------------------------------------------------------------
    # step
    def active_slots(self) -> np.ndarray:
        """Ids of the slots running an episode (do not modify the returned array)."""
        if self._active is None:
            self._active = np.flatnonzero(self.status == _ACTIVE)
            self._active.flags.writeable = False  # shared by every reader until the next change
        return self._active

    def _set_status(self, slot: int, status: SlotStatus) -> None:
        self.status[slot] = status
        self._active = None

    def step(self, actions: list[Any]) -> tuple[list, list, list, list, list]:
        """One env step from per-slot action dicts; per-slot results, ``None`` for inactive slots."""
        active, reward, terminated, truncated, metrics, diverged = self._advance(self.parse_actions(actions))
        obs = self.observe(active)
        n = self.env_num
        steps = self.steps.tolist()
        if len(active) == n:  # every slot active: the per-slot lists are the rows themselves
            infos = [{'episode_index': episode.index, 'steps': count} for episode, count in zip(self.episodes, steps, strict=True)]
            for slot, values in metrics.items():
                infos[slot]['metrics'] = values
            for slot in diverged:
                infos[slot]['diverged'] = True
            return obs, reward.tolist(), terminated.tolist(), truncated.tolist(), infos
        reward, terminated, truncated = reward[active].tolist(), terminated[active].tolist(), truncated[active].tolist()
        obs_out: list = [None] * n
        reward_out: list = [None] * n
        terminated_out: list = [None] * n
        truncated_out: list = [None] * n
        info_out: list = [None] * n
        for row, slot in enumerate(active.tolist()):
            obs_out[slot] = obs[row]
            reward_out[slot] = reward[row]
            terminated_out[slot] = terminated[row]
            truncated_out[slot] = truncated[row]
            info = {'episode_index': self.episodes[slot].index, 'steps': steps[slot]}
            if slot in metrics:
                info['metrics'] = metrics[slot]
            info_out[slot] = info
        for slot in diverged:
            info_out[slot]['diverged'] = True
        return obs_out, reward_out, terminated_out, truncated_out, info_out

    def step_arrays(self, actions: dict[str, dict[str, Any]]) -> ArrayStep:
        """One env step from batched actions; results as arrays over all slots (see ``ArrayStep``)."""
        active, reward, terminated, truncated, metrics, diverged = self._advance(self.parse_batched_actions(actions))
        return ArrayStep(self.observe_arrays(active), reward, terminated, truncated, self._active_mask(active), metrics,
                         diverged)

    def _active_mask(self, active: np.ndarray) -> np.ndarray:
        """A new ``(env_num,)`` bool array, true at ``active`` (an :meth:`active_slots` array):
        a copy of one made when the active slots last changed (a copy costs less than building it)."""
        cached = self._active_mask_cache
        if cached is None or cached[0] is not active:
            mask = np.zeros(self.env_num, dtype=bool)
            mask[active] = True
            cached = self._active_mask_cache = (active, mask)
        return cached[1].copy()

    def _advance(self, commands: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[int, dict[str, Any]],
                                                tuple[int, ...]]:
        """Apply parsed commands, step physics once, run tasks and metrics, finish ended episodes.

        Returns the slots that were active, reward, terminated and truncated as ``(env_num,)``
        arrays (zero/False outside the active slots), the metrics of the episodes that ended, by
        slot, and the slots whose episode ended because their simulation diverged.
        """
        begin_step, before_physics = self._step_hooks()
        for hook in begin_step:
            hook()
        for controller, slots, batch in commands.values():
            if type(slots) is not np.ndarray:  # the dict API's per-slot lists
                slots = np.asarray(slots, dtype=np.intp)
            controller.apply(slots, batch if not isinstance(batch, Unbatched) else controller.batch(batch))
        for hook in before_physics:
            hook()
        self.world.step()
        self.world_steps += 1

        active = self.active_slots()
        if len(active) == self.env_num:
            self.steps += self._one_step  # (an array: adding a Python int costs a scalar conversion)
        else:
            self.steps[active] += 1
        # A slot whose simulation diverged was put back to rest by the engine: its tasks and
        # metrics do not see that state, and its episode ends below. Other slots never notice.
        failed = self.world.failed_slots()
        diverged: tuple[int, ...] = ()
        stepped = active
        if len(failed):
            failed = failed[self.status[failed] == _ACTIVE]
            diverged = tuple(failed.tolist())
            stepped = np.setdiff1d(active, failed) if diverged else active
        reward = np.zeros(self.env_num)
        terminated = np.zeros(self.env_num, dtype=bool)
        truncated = np.zeros(self.env_num, dtype=bool)
        tasks_stepped = False  # else no episode can end but by divergence
        for task in self.tasks.values():
            if type(task).step is _BASE_TASK_STEP:
                continue  # reward 0, never ends: what the arrays already hold
            slots = self.members_of(task, stepped)
            if len(slots):
                reward[slots], terminated[slots], truncated[slots] = task.step(slots)
                tasks_stepped = True
        for reward_object in self.rewards.values():
            slots = self.members_of(reward_object, stepped)
            if len(slots):
                reward[slots] += reward_object.calc(slots)
        for metric in self.metrics.values():
            slots = self.members_of(metric, stepped)
            if len(slots):
                metric.update(slots)
        ended = terminated | truncated if tasks_stepped else None
        metrics = {}
        for slot in diverged:
            terminated[slot] = True
            metrics[slot] = self._finish(slot, True, False, outcome='diverged')
            self._restore_start_state(slot)
        if ended is not None and np.count_nonzero(ended):
            metrics.update({slot: self._finish(slot, bool(terminated[slot]), bool(truncated[slot]))
                            for slot in np.nonzero(ended)[0].tolist()})
        return active, reward, terminated, truncated, metrics, diverged

    def _step_hooks(self) -> tuple[list[Any], list[Any]]:
        """The ``begin_step`` and ``before_physics`` methods of the robot groups that define them
        (the base ones do nothing: no call per step for them), cached until the groups change."""
        cached = self._step_hooks_cache
        if cached is None or cached[0] is not self.robot_groups:
            groups = self.robot_groups.values()
            cached = self._step_hooks_cache = (
                self.robot_groups,
                [group.begin_step for group in groups if type(group).begin_step is not Entity.begin_step],
                [group.before_physics for group in groups if type(group).before_physics is not Entity.before_physics])
        return cached[1], cached[2]

    def warm_up(self, steps: int = 10, render: bool = True, physics: bool = True) -> None:
        """Advance the physics ``steps`` times with no commands, outside the episodes: robots run
        their own loops (balance policies), tasks, metrics and step counts see nothing.
        ``physics=False`` (InternUtopia's render-only warm-up) does nothing: MuJoCo needs no warm-up frames."""
        if not physics:
            return
        begin_step, before_physics = self._step_hooks()
        for _ in range(steps):
            for hook in begin_step:
                hook()
            for hook in before_physics:
                hook()
            self.world.step()
            self.world_steps += 1

    def _finish(self, slot: int, terminated: bool, truncated: bool, outcome: str | None = None) -> dict[str, Any]:
        """End ``slot``'s episode and write its record; ``outcome`` marks one that did not end by
        its task: ``'diverged'`` (its simulation blew up) or ``'abandoned'`` (reset while running)."""
        metrics = {metric.name: metric.calc(slot) for metric in self.slot_metrics[slot]}
        custom = getattr(self.slot_task[slot], 'episode_metrics', None)
        if custom is not None:  # an upstream-style task's own calculate_metrics()
            metrics = custom(slot, metrics)
        episode = self.episodes[slot]
        # The slot is done before its record goes out: a failing write never leaves it running.
        self._set_status(slot, SlotStatus.DONE)
        record = {
            'episode_index': episode.index,
            'slot': slot,
            'task_type': episode.config.type,
            'scene': episode.config.scene_asset_path,
            'metrics': metrics,
            'steps': int(self.steps[slot]),
            'terminated': terminated,
            'truncated': truncated,
            'wall_time_s': round(time.perf_counter() - self.started_at[slot], 6),
        }
        if outcome is not None:
            record['outcome'] = outcome
        self.results.write(record)
        return metrics

    def _restore_start_state(self, slot: int) -> None:
        """Put ``slot`` back at its episode's start state, controllers and sensors reset (after a
        divergence: no NaN or runaway command stays behind for the slot's next episode)."""
        steps = self.steps[slot]
        self._place_episode(slot, self.episodes[slot])
        self.steps[slot] = steps
        self._set_status(slot, SlotStatus.DONE)
        self.world.forward(np.array([slot]))

    def entities_of(self, slot: int) -> dict[str, Entity]:
        """Robots and objects present in ``slot``, by name."""
        return {**self.slot_objects[slot], **self.slot_robots[slot]}

    def close(self) -> None:
        """Release the world and flush the results file; print the run summary when results go
        somewhere and an episode finished (a summary of nothing says nothing)."""
        summary = self.results.summary()
        if self.results.summary_on_close and self.results.target != 'none' and summary['episodes']:
            print(f'[internutopia] run summary: {json.dumps(summary)}', flush=True)
        self.results.close()
        self.world.close()


def _slot_parts(task: TaskCfg, robots: dict[str, BaseRobot], objects: dict[str, BaseObject]) -> list[SlotPart]:
    """The parts of a slot holding ``task``: its scene, then its robots and objects by name."""
    return ([SlotPart('scene/', scene_spec(task))]
            + [SlotPart(f'{name}/', robot.spec(), contact_root=robot.base_body, max_dt=robot.max_physics_dt)
               for name, robot in robots.items()]
            + [SlotPart(f'{name}/', entity.spec(), max_dt=entity.max_physics_dt) for name, entity in objects.items()])
