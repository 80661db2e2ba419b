"""The task, reward and metric objects of the running episodes, and which slots each one serves.

One task object per task type, one reward object per distinct reward config and one metric
object per distinct metric config, each serving every slot whose episode names it (a boolean
mask over slots). After a physics step, :meth:`Terms.step` runs each once over the slots it
serves: tasks (reward 0 unless a reward says otherwise, terminated, truncated), then rewards
(added), then metrics (updated). The runner owns the rewards; tasks never build them. A task
may offer one pass that also does the work of the rewards and metrics serving its slots
(:meth:`~internutopia.core.task.base.BaseTask.combined_step`); those are then not called apart.

A reward or metric whose class has an ``episodes_ending(ending)`` method (a neutral hook, for
those that treat the step an episode ends on apart, e.g. the per-slot layer's adapters, which
follow InternUtopia: no ``calc()`` or ``update(obs)`` on that step) is told before the rewards and
metrics of each step run: ``ending`` is the step's ``terminated | truncated`` as the tasks gave
them, shape (env_num,), read-only, valid for that step's calls. Nothing else changes: it is still
called for all the slots it serves. A step with no such object computes nothing for it.

When a slot's episode is over (:meth:`Terms.leave`: the reset that replaces it or empties the
slot), its task, then its reward and metrics, then its robot and object groups are told, each
through its ``episode_ended(slot)`` where it has one (a neutral hook: objects that keep something
per slot and episode let it go there). A task whose ``reads_metrics_at_start`` is true starts
after its metrics (and before its reward), so that its start sees them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from internutopia.core.config import TaskCfg
from internutopia.core.metric.base import BaseMetric
from internutopia.core.reward.base import BaseReward
from internutopia.core.robot.base import rows_of
from internutopia.core.runner.failures import SlotFailures, slots_that_fail
from internutopia.core.runner.slots import SlotTable
from internutopia.core.task.base import BaseTask, CombinedStep, RecordedSteps
from internutopia.core.view import EnvView

#: Metric (and reward) objects kept while serving no slot (for the next episode with the same config).
_IDLE_METRICS_KEPT = 64

_BASE_TASK_STEP = BaseTask.step  # tasks that keep it need no call per step
_BASE_TASK_COMBINED_STEP = BaseTask.combined_step  # tasks that keep it step on their own
_BASE_TASK_RESET_SLOTS = BaseTask.reset_slots  # tasks that keep it start slot by slot
_BASE_METRIC_UPDATE = BaseMetric.update  # metrics that keep it need no call per step

#: :meth:`Terms.recorded_pass`'s result: reward, terminated, truncated and steps run, per slot.
RecordedResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _json_value(value: Any) -> Any:
    """What a config value pydantic cannot write as JSON stands for in :func:`config_key`: a numpy
    array's or scalar's values (they compare by value), else its ``repr``."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else repr(value)


def config_key(config: Any) -> str:
    """The key a metric or reward config's object is shared by (episodes whose configs are equal
    share one): its JSON, with values JSON has no form for (numpy arrays and scalars in
    ``metric_config`` or ``reward_settings``, which InternUtopia passes through) written by
    :func:`_json_value` instead of failing every start."""
    return config.model_dump_json(fallback=_json_value)


def _reads_metrics_at_start(task: BaseTask) -> bool:
    """Whether ``task`` starts after its metrics (its ``reads_metrics_at_start``; see the module docstring)."""
    return bool(getattr(task, 'reads_metrics_at_start', False))


class _StepPlan(NamedTuple):
    """:meth:`Terms._plan`: ``(object, slots it serves, their rows)`` of each task, reward and
    metric run in a step (a task's with its combined step, or ``None``), and the hooks of those
    rewards and metrics told which slots' episodes end on the step (``episodes_ending``, see the
    module docstring)."""

    tasks: tuple[tuple[BaseTask, np.ndarray, Any, CombinedStep | None], ...]
    rewards: tuple[tuple[BaseReward, np.ndarray, Any], ...]
    metrics: tuple[tuple[BaseMetric, np.ndarray, Any], ...]
    told: tuple[Callable[[np.ndarray], None], ...] = ()


class Terms:
    """Tasks, rewards and metrics of the episodes in ``table``'s slots (see the module docstring).

    Attributes:
        tasks: task objects by task type.
        rewards: reward objects by reward config (JSON).
        metrics: metric objects by metric config (JSON).
        members: which slots each of them serves, by ``id(object)``. Each a mask of shape (env_num,).
    """

    def __init__(self, table: SlotTable, view: EnvView) -> None:
        self.table = table
        self.view = view
        self.env_num = table.env_num
        self.tasks: dict[str, BaseTask] = {}
        self.rewards: dict[str, BaseReward] = {}
        self.metrics: dict[str, BaseMetric] = {}
        self.members: dict[int, np.ndarray] = {}
        #: Per object, the last :meth:`members_of` answer: ``(slots asked, slots served, _version)``.
        self._served: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
        self._version = 0  # moves whenever a mask changes (an episode starts or leaves)
        #: The last :meth:`_plan`: ``(slots asked, _version, plan)``.
        self._last_plan: tuple[np.ndarray, int, _StepPlan] | None = None
        #: Each slot's robot and object groups of its episode (told when it is over, see :meth:`leave`).
        self._slot_entities: list[tuple[Any, ...]] = [() for _ in range(self.env_num)]

    # -- an episode's start and end --------------------------------------------------------------
    def start(self, slot: int, task: TaskCfg) -> None:
        """Start the task, metrics and reward of ``slot``'s episode ``task`` (its state is in place)."""
        task_object = self._task_object(task.type)
        self._attach(slot, task_object)
        # The task first (an upstream-style task reads its robots when it starts), then its
        # metrics, then its reward (which may read the task); the metrics first for a task that
        # reads them as it starts (InternUtopia's tasks make theirs in their __init__).
        if _reads_metrics_at_start(task_object):
            self._start_metrics(slot, task)
            task_object.reset_slot(slot, task)
            self._start_reward(slot, task)
        else:
            task_object.reset_slot(slot, task)
            self._start_metrics_and_reward(slot, task)

    def start_many(self, slots: list[int], tasks: list[TaskCfg], started: list[int], failed: dict[int, Exception]) -> None:
        """Start the episodes ``tasks`` of ``slots`` (their states in place), as :meth:`start` each,
        but a task type whose class has a batched ``reset_slots`` starts all its slots in one call.

        Each slot is appended to ``started`` once its episode started, or its error is put in
        ``failed``: one slot's error fails that slot alone (a batched call that raises is done
        again slot by slot, to find which). A ``KeyboardInterrupt`` goes up, ``started`` saying
        which slots started before it.
        """
        by_type: dict[str, list[int]] = {}
        for k, task in enumerate(tasks):
            by_type.setdefault(task.type, []).append(k)
        for type_name, ks in by_type.items():
            task_object = self.tasks.get(type_name)  # (made by the first start of its type, below)
            if (len(ks) > 1 and task_object is not None and type(task_object).reset_slots is not _BASE_TASK_RESET_SLOTS
                    and not _reads_metrics_at_start(task_object)):
                group_slots = [slots[k] for k in ks]
                group_tasks = [tasks[k] for k in ks]
                for slot in group_slots:
                    self._attach(slot, task_object)
                try:
                    task_object.reset_slots(np.asarray(group_slots, dtype=np.intp), group_tasks)
                except Exception:
                    pass  # done again slot by slot below, each failing alone
                else:
                    for slot, task in zip(group_slots, group_tasks, strict=True):
                        try:
                            self._start_metrics_and_reward(slot, task)
                        except Exception as exc:
                            failed[slot] = exc
                            continue
                        started.append(slot)
                    continue
            for k in ks:
                try:
                    self.start(slots[k], tasks[k])
                except Exception as exc:
                    failed[slots[k]] = exc
                    continue
                started.append(slots[k])

    def _task_object(self, type_name: str) -> BaseTask:
        task_object = self.tasks.get(type_name)
        if task_object is None:
            task_object = self.tasks[type_name] = BaseTask.create(type_name, self.view)
        return task_object

    def _attach(self, slot: int, task_object: BaseTask) -> None:
        """``task_object`` serves ``slot`` (no metric yet)."""
        self._version += 1
        self.table.slot_task[slot] = task_object
        self.table.slot_metrics[slot] = []
        self._mask(task_object)[slot] = True
        self._slot_entities[slot] = (*self.table.slot_robots[slot].values(), *self.table.slot_objects[slot].values())

    def _start_metrics_and_reward(self, slot: int, task: TaskCfg) -> None:
        """Start the metrics and the reward of ``slot``'s episode ``task`` (its task started)."""
        self._start_metrics(slot, task)
        self._start_reward(slot, task)

    def _start_metrics(self, slot: int, task: TaskCfg) -> None:
        """Start the metrics of ``slot``'s episode ``task``."""
        self._version += 1
        metrics = self.table.slot_metrics[slot] = []
        for metric_cfg in task.metrics:
            key = config_key(metric_cfg)
            metric = self.metrics.get(key)
            if metric is None:
                metric = self.metrics[key] = BaseMetric.create(metric_cfg, self.view)
            metrics.append(metric)
        for metric in metrics:
            metric.reset_slot(slot, task)
            self._mask(metric)[slot] = True
        if len(self.metrics) > _IDLE_METRICS_KEPT:
            self._drop_idle(self.metrics)

    def _start_reward(self, slot: int, task: TaskCfg) -> None:
        """Start the reward of ``slot``'s episode ``task`` (its task started)."""
        self._version += 1
        reward_cfg = getattr(task, 'reward', None)
        if reward_cfg is not None:
            key = config_key(reward_cfg)
            reward = self.rewards.get(key)
            if reward is None:
                reward = self.rewards[key] = BaseReward.create(reward_cfg, self.view, where=f'{task.type}.reward')
            reward.reset_slot(slot, task)
            self._mask(reward)[slot] = True
        if len(self.rewards) > _IDLE_METRICS_KEPT:
            self._drop_idle(self.rewards)

    def leave(self, slot: int) -> None:
        """``slot`` is served by none of them any more: its episode, if it had one, is over.

        Its task, then its rewards and metrics, then its robot and object groups are told, each
        through its ``episode_ended(slot)`` where it has one (see the module docstring).
        """
        self._version += 1
        task = self.table.slot_task[slot]
        terms = [owner for owner in (*self.rewards.values(), *self.metrics.values())
                 if (mask := self.members.get(id(owner))) is not None and mask[slot]]
        entities, self._slot_entities[slot] = self._slot_entities[slot], ()
        self.table.slot_task[slot] = None
        self.table.slot_metrics[slot] = []
        for mask in self.members.values():
            mask[slot] = False
        for owner in (task, *terms, *entities):
            hook = getattr(owner, 'episode_ended', None) if owner is not None else None
            if hook is not None:
                hook(slot)

    def episode_metrics(self, slot: int) -> Any:
        """The metrics of ``slot``'s episode now: each metric object's value, by name (or what
        the task reports instead, see :meth:`~internutopia.core.task.base.BaseTask.episode_metrics`)."""
        metrics = {metric.name: metric.calc(slot) for metric in self.table.slot_metrics[slot]}
        task = self.table.slot_task[slot]
        return task.episode_metrics(slot, metrics) if task is not None else metrics

    # -- a step ------------------------------------------------------------------------------------
    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool, dict[int, Exception]]:
        """Reward, terminated and truncated, shape (env_num,), after a physics step of ``slots``
        (zero/False elsewhere), whether any task that can end an episode ran, and the slots whose
        task, reward or metric raised, with the error (those slots' episodes fail; see
        :func:`~internutopia.core.runner.failures.slots_that_fail`; a call raising
        :class:`~internutopia.core.runner.failures.SlotFailures` names them itself)."""
        reward = np.zeros(self.env_num)
        terminated = np.zeros(self.env_num, dtype=bool)
        truncated = np.zeros(self.env_num, dtype=bool)
        failed: dict[int, Exception] = {}
        plan = self._plan(slots)
        ran: list[CombinedStep] = []  # the combined steps that ran (the plan leaves out what they cover)
        covered: set[int] = set()  # rewards and metrics done by a combined step that ran, once the plan is made again
        combined_failed = False
        for task, served, rows, combined in plan.tasks:
            try:
                if combined is None:
                    reward[rows], terminated[rows], truncated[rows] = task.step(served)
                else:
                    reward[rows], terminated[rows], truncated[rows] = combined.step(served)
                    ran.append(combined)
            except SlotFailures as exc:  # (each slot ran once: the others' results stand)
                reward[rows], terminated[rows], truncated[rows] = exc.result
                failed.update(exc.errors)
            except Exception:
                combined_failed |= combined is not None
                self._step_alone(task, served, reward, terminated, truncated, failed)
        if failed or combined_failed:  # (the failed slots' rewards and metrics are not run)
            # (made without combining: it lists the objects the combined steps that ran covered, skipped below)
            covered = {id(owner) for combined in ran for owner in (*combined.rewards, *combined.metrics)}
            plan = self._plan(np.setdiff1d(slots, np.fromiter(failed, dtype=np.intp, count=len(failed))), combine=False)
        if plan.told:  # (rewards and metrics that treat the step an episode ends on apart)
            ending = terminated | truncated
            ending.flags.writeable = False
            for tell in plan.told:
                tell(ending)
        for reward_object, served, rows in plan.rewards:
            if covered and id(reward_object) in covered:
                continue
            try:
                reward[rows] += reward_object.calc(served)
            except SlotFailures as exc:
                reward[rows] += exc.result
                for slot, error in exc.errors.items():
                    failed.setdefault(slot, error)
            except Exception:
                def add_alone(one: np.ndarray, owner: BaseReward = reward_object) -> None:
                    reward[one] += owner.calc(one)

                for slot, error in slots_that_fail(add_alone, served).items():
                    failed.setdefault(slot, error)
        for metric, served, _ in plan.metrics:
            if covered and id(metric) in covered:
                continue
            try:
                metric.update(served)
            except SlotFailures as exc:
                for slot, error in exc.errors.items():
                    failed.setdefault(slot, error)
            except Exception:
                for slot, error in slots_that_fail(metric.update, served).items():
                    failed.setdefault(slot, error)
        return reward, terminated, truncated, bool(plan.tasks), failed

    def recorded_pass(self, slots: np.ndarray) -> Callable[[RecordedSteps], RecordedResult] | None:
        """What :meth:`step` does after each physics step of ``slots``, done afterwards over the
        steps of a recorded call, where every stepping task offers it
        (``CombinedStep.recorded``) and no reward or metric runs apart; else ``None``.

        The pass gives, shape (env_num,): each slot's rewards added up, its terminated and
        truncated (on its last step), and the steps it ran (up to the one its episode ended on);
        zero, ``False`` and all of the call's steps for slots no task steps."""
        plan = self._plan(slots)
        if plan.rewards or plan.metrics or not plan.tasks:
            return None
        passes = []
        for task, served, rows, combined in plan.tasks:
            if combined is None or combined.recorded is None:
                return None
            passes.append((task, served, rows, combined.recorded))
        env_num = self.env_num

        def run(recorded: RecordedSteps) -> RecordedResult:
            reward = np.zeros(env_num)
            terminated = np.zeros(env_num, dtype=bool)
            truncated = np.zeros(env_num, dtype=bool)
            ran = np.full(env_num, recorded.physics_steps, dtype=np.intp)
            for task, served, rows, task_pass in passes:
                try:
                    reward[rows], terminated[rows], truncated[rows], ran[rows] = task_pass(served, recorded)
                except Exception as exc:  # (no slot's alone: the pass ran for them all; see CombinedStep.recorded)
                    raise RuntimeError(f'{type(task).__name__}: its recorded pass (CombinedStep.recorded) raised for envs '
                                       f'{served.tolist()}; a recorded pass must not raise (the repeat\'s physics is put '
                                       f'back). {type(exc).__name__}: {exc}') from exc
            return reward, terminated, truncated, ran

        return run

    def quiet_steps(self, slots: np.ndarray, limit: int) -> int:
        """How many of the next :meth:`step` calls with ``slots`` (at most ``limit``) are known
        now to do nothing: every stepping task says so (:meth:`BaseTask.quiet_steps`), and no
        reward or updating metric serves these slots (they run on every step)."""
        plan = self._plan(slots)
        if plan.rewards or plan.metrics:
            return 0
        for task, served, _, combined in plan.tasks:
            if combined is not None:
                return 0
            limit = min(limit, task.quiet_steps(served, limit))
            if limit <= 0:
                return 0
        return limit

    def _plan(self, slots: np.ndarray, combine: bool = True) -> _StepPlan:
        """Who runs in a step of ``slots``: the tasks that step (not :class:`BaseTask`'s ``step``),
        every reward, and the metrics that update, each with the slots it serves and their rows;
        with ``combine``, a task's :meth:`~BaseTask.combined_step` in place of the rewards and
        metrics it covers.

        The same read-only ``slots`` array with no episode started or left since gives the same
        plan: every physics step of an action repeat asks it.
        """
        last = self._last_plan
        if combine and last is not None and last[0] is slots and last[1] == self._version:
            return last[2]

        def served(owners: Any, method: str = '', does_nothing: Any = None) -> list[tuple[Any, np.ndarray, Any]]:
            found = []
            for owner in owners:
                if method and getattr(type(owner), method) is does_nothing:
                    continue  # (the base task's step and metric's update: no call per step)
                members = self.members_of(owner, slots)
                if len(members):
                    found.append((owner, members, rows_of(members, self.env_num)))
            return found

        rewards = served(self.rewards.values())
        metrics = served(self.metrics.values(), 'update', _BASE_METRIC_UPDATE)
        tasks: list[tuple[BaseTask, np.ndarray, Any, CombinedStep | None]] = []
        for task, members, rows in served(self.tasks.values(), 'step', _BASE_TASK_STEP):
            combined = None
            if combine and type(task).combined_step is not _BASE_TASK_COMBINED_STEP:
                combined = self._combine(task, members, rewards, metrics)
            tasks.append((task, members, rows, combined))
        told = tuple(owner.episodes_ending for owner, _, _ in (*rewards, *metrics)
                     if getattr(type(owner), 'episodes_ending', None) is not None)
        plan = _StepPlan(tuple(tasks), tuple(rewards), tuple(metrics), told)
        if combine and not slots.flags.writeable:
            self._last_plan = (slots, self._version, plan)
        return plan

    @staticmethod
    def _combine(task: BaseTask, members: np.ndarray, rewards: list[tuple[Any, np.ndarray, Any]],
                 metrics: list[tuple[Any, np.ndarray, Any]]) -> CombinedStep | None:
        """``task``'s combined step over ``members`` with the rewards and metrics serving exactly
        those slots, if it offers one; the objects it covers are taken out of ``rewards`` and ``metrics``."""
        def same(entries: list[tuple[Any, np.ndarray, Any]]) -> list[Any]:
            return [owner for owner, served, _ in entries
                    if served is members or (len(served) == len(members) and served.tobytes() == members.tobytes())]

        offered_rewards, offered_metrics = same(rewards), same(metrics)
        combined = task.combined_step(offered_rewards, offered_metrics)
        if combined is None:
            return None
        for covered, offered, what in ((combined.rewards, offered_rewards, 'reward'), (combined.metrics, offered_metrics, 'metric')):
            stray = [owner for owner in covered if not any(owner is o for o in offered)]
            if stray:
                raise ValueError(f'{type(task).__name__}.combined_step covers {what} object(s) it was not offered: {stray}')
        covered_ids = set(map(id, (*combined.rewards, *combined.metrics)))
        rewards[:] = [entry for entry in rewards if id(entry[0]) not in covered_ids]
        metrics[:] = [entry for entry in metrics if id(entry[0]) not in covered_ids]
        return combined

    @staticmethod
    def _step_alone(task: BaseTask, served: np.ndarray, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                    failed: dict[int, Exception]) -> None:
        """``task.step(served)`` raised: step each slot alone, keeping the results of those that work."""
        for slot in served.tolist():
            one = np.array([slot], dtype=served.dtype)
            try:
                reward[one], terminated[one], truncated[one] = task.step(one)
            except Exception as exc:  # an extension's error: it ends this slot's episode only
                failed[slot] = exc
                reward[slot], terminated[slot], truncated[slot] = 0.0, False, False

    def warm_up_step(self, slots: np.ndarray) -> None:
        """Tell each task with a :meth:`~internutopia.core.task.base.BaseTask.warm_up_step` that
        its slots among ``slots`` took a physics step outside their episodes."""
        for task in list(self.tasks.values()):
            served = self.members_of(task, slots)
            if len(served) and type(task).warm_up_step is not BaseTask.warm_up_step:
                task.warm_up_step(served)

    def members_of(self, owner: Any, slots: np.ndarray) -> np.ndarray:
        """Those of ``slots`` that ``owner`` (a task, reward or metric object) serves.

        Asked with the same read-only ``slots`` array (the table's active slots, shared until a
        status changes) and no episode started or left since, it is the same read-only answer:
        every step asks it for each task, reward and metric, several times per action.
        """
        key = id(owner)
        mask = self.members.get(key)
        if mask is None:
            return slots[:0]
        last = self._served.get(key)
        if last is not None and last[0] is slots and last[2] == self._version:
            return last[1]
        member = mask[slots]
        served = slots if np.count_nonzero(member) == len(slots) else slots[member]
        if not slots.flags.writeable:
            served.flags.writeable = False
            self._served[key] = (slots, served, self._version)
        return served

    def _mask(self, owner: Any) -> np.ndarray:
        mask = self.members.get(id(owner))
        if mask is None:
            mask = self.members[id(owner)] = np.zeros(self.env_num, dtype=bool)
        return mask

    def _drop_idle(self, objects: dict[str, Any]) -> None:
        """Forget metric or reward objects that serve no slot: episodes whose metric or reward
        configs all differ (a sweep over reward settings) would otherwise leave one object (and
        its per-slot arrays) behind each."""
        for key, owner in list(objects.items()):
            mask = self.members.get(id(owner))
            if mask is None or not mask.any():
                del objects[key]
                self._version += 1
                self.members.pop(id(owner), None)
                self._served.pop(id(owner), None)


__all__ = ['Terms']
