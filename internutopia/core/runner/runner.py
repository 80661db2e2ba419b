"""The runner: slots, episodes, entity groups, tasks and metrics around one physics world.

:class:`Runner` implements the semantics of ``vec_env.Env`` (``docs/contract.md``) without its argument
checking: the env validates, the runner does. It is a few collaborators, each with one job:

- :class:`~internutopia.core.runner.slots.SlotTable`: what each slot holds (status, episode, steps, ...);
- :class:`~internutopia.core.runner.groups.EntityGroups`: the robot and object groups and the world's packs;
- :class:`~internutopia.core.runner.terms.Terms`: the task, reward and metric objects and whom they serve;
- :class:`~internutopia.core.runner.actions.ActionParser` and
  :class:`~internutopia.core.runner.observations.Observer`: actions in, observations out;
- :class:`~internutopia.core.runner.starts.EpisodeStarts` and :class:`~internutopia.core.runner.ends.EpisodeEnds`:
  an episode's start and end, each slot's failure its own;
- :class:`~internutopia.core.runner.recorded.RecordedRepeats`: an action repeat in one recorded physics call;
- the :class:`~internutopia.core.view.EnvView` that tasks, metrics and rewards read (never the runner).

Per step, work is done per *group* (all slots that share a robot, controller, task or metric),
never per slot, except building the per-slot dicts. :meth:`Runner.step` reads top to bottom.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable
from typing import Any

import numpy as np

from internutopia.core.backend import get_backend
from internutopia.core.config import Config, TaskCfg
from internutopia.core.entity import begin_command_phase, end_command_phase
from internutopia.core.episode_queue import Episode, EpisodeQueue, EpisodeSource
from internutopia.core.results import ResultsWriter
from internutopia.core.runner.actions import ActionParser, Commands, Unbatched, apply_alone
from internutopia.core.runner.ends import EpisodeEnds
from internutopia.core.runner.entries import EntriesCheck
from internutopia.core.runner.failures import STEP_RESULT_ATTRIBUTE, Attempts, slots_that_fail
from internutopia.core.runner.groups import EntityGroups
from internutopia.core.runner.guard import CallGuard
from internutopia.core.runner.observations import ObservedEntries, Observer, entity_observations, merge_rows
from internutopia.core.runner.outcomes import Advance, ArrayStep, per_slot_lists
from internutopia.core.runner.reads import RunnerReads
from internutopia.core.runner.recorded import RecordedRepeats
from internutopia.core.runner.slots import BYTES_PER_SLOT, SlotStatus, SlotTable
from internutopia.core.runner.starts import EpisodeStarts
from internutopia.core.runner.terms import Terms
from internutopia.core.util.memory import check_slots_fit, jit_runtime_bytes, runtimes_loaded
from internutopia.core.view import EnvView

_ACTIVE = int(SlotStatus.ACTIVE)  # a plain int for per-step comparisons (enum lookups are slow)


class Runner(RunnerReads):
    """Owns the world and everything placed in it; see :class:`internutopia.core.vec_env.Env`."""

    #: InternUtopia's ``env.runner.simulation_app`` and ``env.runner.task_config_manager``: set by
    #: the env that owns the runner (a layer above this one, hence untyped); absent otherwise.
    simulation_app: Any
    task_config_manager: Any

    def __init__(self, config: Config, episodes: Iterable[TaskCfg] | None = None, queue: EpisodeSource | None = None) -> None:
        # The compiled kernels' runtime, if this process has not loaded it yet, comes once per process.
        self._runtime_bytes = jit_runtime_bytes()
        self._runtimes_before = frozenset(runtimes_loaded())  # (those its robots load later are its own)
        check_slots_fit(config.env_num, BYTES_PER_SLOT, "the slots' bookkeeping", self._runtime_bytes)
        self.config = config
        self.env_num = config.env_num
        self.sim = config.simulator
        self.queue: EpisodeSource = queue if queue is not None else EpisodeQueue(episodes if episodes is not None else config.task_configs)
        #: The physics backend ``config.simulator.backend`` names, and the world it built.
        self.backend = get_backend(config.simulator.backend)
        self.world = self.backend.create_world(config.simulator, config.env_num, config.env_offset_size)
        self.results = ResultsWriter(config.metrics_save_path, record_format=config.metrics_save_format)
        self.world_steps = 0
        self.table = SlotTable(self.env_num)
        self._every_slot = np.arange(self.env_num)  # (read-only: every slot in order)
        self._every_slot.flags.writeable = False
        self.groups = EntityGroups(self.env_num, self.sim, self.world, view=None)
        #: What tasks, metrics and rewards see of the env (they are never given the runner).
        self.view = EnvView(self.table, self.groups, self.world, self.sim,
                            lambda groups, slots: entity_observations(groups, slots, self.env_num))
        self.groups.view = self.view
        self.terms = Terms(self.table, self.view)
        self.actions = ActionParser(self.table, self.groups)
        self.observer = Observer(self.groups, self.terms)
        self.entries = EntriesCheck(self.observer)  # (a caller's observe_only, checked before it is used)
        self._active_mask_cache: tuple[np.ndarray, np.ndarray] | None = None
        #: Failed tries of the episodes that failed to load or start and may be tried again.
        self.attempts = Attempts(config.episode_attempts)
        self._failed_errors: list[BaseException] = []  # of episodes recorded as failed in this call
        self._restart_taken: list[Episode | None] | None = None  # a step's restarts, taken before it
        #: One call at a time, Ctrl-C between calls (see :mod:`~internutopia.core.runner.guard`).
        self.guard = CallGuard('this Env')
        #: Takes, loads, places and starts the episodes of a reset, each slot's failure its own.
        self.starts = EpisodeStarts(self)
        #: Runs an action repeat's physics in one recorded call where its tasks allow (see
        #: :mod:`~internutopia.core.runner.recorded`; off with :attr:`fuse_steps`).
        self.recorded = RecordedRepeats(self)
        #: Ends running episodes: their records, their slots done (see :mod:`~internutopia.core.runner.ends`).
        self.ends = EpisodeEnds(self)
        #: Whether an action repeat advances its quiet physics steps in one call (see
        #: :meth:`_quiet_steps`); ``False`` steps one at a time (the same results: for comparisons).
        self.fuse_steps = True

    # ------------------------------------------------------------------------------------------
    # reset
    def prepare(self, episodes: list[Episode | None]) -> None:
        """Do ahead, without changing any slot, all a reset with ``episodes`` could fail on (see
        :meth:`EpisodeStarts.prepare <internutopia.core.runner.starts.EpisodeStarts.prepare>`).

        Raises:
            ValueError: an unknown type, a scene or model that does not load, not enough memory.
        """
        self.starts.prepare(episodes)

    def reset(self, slots: list[int]) -> list[Episode | None]:
        """Give each of ``slots`` (validated, distinct) the next episode, in order; the episodes
        the slots hold afterwards (``None`` where the queue ran out).

        An episode that cannot be loaded (an unknown type, a missing or broken scene, not enough
        memory) makes the reset raise before any slot changes, its episodes back in the queue;
        after ``Config.episode_attempts`` such tries it is recorded as failed instead of going
        back. An episode whose start raises is that slot's failure alone (see
        :mod:`~internutopia.core.runner.starts`); with ``Config.episode_errors='raise'`` the first
        such error is raised once the reset is complete.
        """
        with self.guard.enter('reset'):
            taken = self.starts.reset(slots, taken=self.starts.take(slots))[0]
            self._raise_recorded(taken)
            return taken

    def reset_observed(self, slots: list[int], arrays: bool = False,
                       only: ObservedEntries | None = None) -> tuple[list[Episode | None], Any]:
        """:meth:`reset`, with the first observation of the slots that got an episode: ``{slot:
        observation dict}``, or with ``arrays`` the array observation (``(env_num, ...)`` rows of
        those slots; ``only``: see :meth:`Observer.observe_arrays`).

        The first observation is part of an episode's start: a slot whose observation raises
        (its sensor, its task's observation) has an episode that failed to start (back to the
        queue while it has tries left, else recorded as failed) and takes the next episode;
        every other slot is untouched. With ``arrays``, the observation is ``None`` when a robot
        or task in use is upstream-style (per-slot dicts only: :meth:`observe`).
        """
        def observe(rows: np.ndarray) -> Any:
            if not arrays:
                return self.observer.observe(rows)
            # (an upstream-style class has no array observation: not any slot's failure)
            return self.observer.observe_arrays(rows, only) if self.observer.arrays_ready() else None

        if only is not None:
            only = self.entries.checked(only, None)
        with self.guard.enter('reset'):
            taken, observed = self.starts.reset(slots, observe, self.starts.take(slots))
            self._raise_recorded(taken)
        if not arrays:
            return taken, {slot: row for rows, part in observed for slot, row in zip(rows.tolist(), part, strict=True)}
        if any(part is None for _, part in observed):
            return taken, None
        tree: dict[str, Any] = observed[0][1] if observed else {}
        for rows, part in observed[1:]:
            merge_rows(tree, part, rows)
        return taken, tree

    def _place_episodes(self, slots: list[int], episodes: list[Episode | None]) -> None:
        """Hand each of ``slots`` its episode and write its start state (no forward pass); raises
        what placing the first failing slot raised, once the others are placed
        (:meth:`EpisodeStarts.place <internutopia.core.runner.starts.EpisodeStarts.place>`)."""
        failed: list[tuple[int, Exception]] = []
        self.starts.place(slots, episodes, failed)
        if failed:
            raise failed[0][1]

    # ------------------------------------------------------------------------------------------
    # step
    def step(self, actions: list[Any], flags: str = 'gymnasium') -> tuple[list, list, list, list, list]:
        """One env step from per-slot action dicts; per-slot results, ``None`` for inactive slots.

        ``flags='internutopia'`` gives ``terminated`` as ``vec_env.Env.step`` reports it by default
        (``True`` where an episode ended or none runs), from the arrays rather than per slot.
        """
        with self.guard.enter('step'):
            commands = self.actions.parse(actions)
            done = self._advance(commands)
            obs = self._observe_isolated(done)
            result = per_slot_lists(obs, done, self.table, flags == 'internutopia')
            self._raise_recorded(result)
            return result

    def step_arrays(self, actions: dict[str, dict[str, Any]], observe: bool = True,
                    observe_only: ObservedEntries | None = None, repeat: int = 1,
                    restart: list[int] | None = None) -> ArrayStep:
        """One env step from batched actions; results as arrays over all slots (see ``ArrayStep``).

        ``observe=False`` observes only the slots whose episode ended on this step (their final
        observation); the others' rows are zeros (``obs`` is ``{}`` when none ended). For a caller
        that repeats an action and reads the observation of the last step only (observations are
        read, never written, so skipping them changes nothing else). ``observe_only`` keeps those
        entries of the observation (see :meth:`Observer.observe_arrays`). ``repeat > 1``: see
        :meth:`step_arrays_repeated`; ``restart`` (validated slots running no episode): see there.
        """
        if restart is not None or repeat != 1 or isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)):
            return self.step_arrays_repeated(actions, repeat, observe_only, restart)
        if observe_only is not None:
            observe_only = self.entries.checked(observe_only, self.table.active_slots())
        with self.guard.enter('step'):
            done = self._advance(self.actions.parse_batched(actions))
            observed = done.active
            if not observe:
                observed = observed[(done.terminated | done.truncated)[observed]]
            obs = self._observe_arrays_isolated(done, observed, observe_only)
            result = ArrayStep(obs, done.reward, done.terminated, done.truncated, self._active_mask(done.active),
                               done.metrics, done.diverged, done.failed)
            self._raise_recorded(result)
            return result

    def step_arrays_repeated(self, actions: dict[str, dict[str, Any]], repeat: int,
                             observe_only: ObservedEntries | None = None, restart: list[int] | None = None) -> ArrayStep:
        """``repeat`` physics steps with the same batched actions (an action repeat), as one result.

        The same as ``repeat`` calls of :meth:`step_arrays` summed: each slot's reward is the sum
        over the steps it ran, an episode that ends on an inner step ends there (its flags, metrics
        and final observation are that step's; its slot is not stepped again), and the observation
        of every other slot is the last step's; ``active`` marks the slots that ran. Only the
        ended slots are observed on the inner steps (every slot when a robot has sensors: cameras
        keep their frames), and the actions are parsed again only after an episode ends. Stops
        early when no episode runs. The steps on which nothing but the physics has to run are
        advanced in one physics call (:meth:`_quiet_steps`; the same results, but a simulation
        that diverges inside such a call is found at its end, its record's ``steps`` counting
        the whole call). Where the tasks can read the steps afterwards, the whole repeat (or each
        stretch of it between two steps a robot's hooks act on, a walking policy's ticks) is one
        recorded physics call instead (:mod:`~internutopia.core.runner.recorded`, the same
        results). Each physics call is its own call for Ctrl-C (see
        :mod:`~internutopia.core.runner.guard`).

        ``restart`` (slots running no episode, validated): after the last physics step, these
        slots take their next episodes as :meth:`reset_observed` gives them, and their first
        observation is gathered in the same pass as the step's (one observation of the world, not
        two); their rows of ``obs`` hold it and ``started`` lists their new episodes' configs in
        ``restart``'s order (``None`` where the queue ran out). A start or an observation that
        fails is what it is in a reset and in a step, each slot's alone. Their episodes are taken
        from the queue before the step: one that does not load raises, the step not taken.
        """
        if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 1:
            raise ValueError(f'repeat must be an int >= 1; got {repeat!r}')
        if observe_only is not None:
            observe_only = self.entries.checked(observe_only, self.table.active_slots())
        try:
            if restart:
                with self.guard.enter('step'):
                    self._restart_taken = self.starts.take(restart)
            return self._repeat_steps(actions, int(repeat), observe_only, restart)
        finally:
            if self._restart_taken is not None:  # (the step raised before they started: queued again, in order)
                self.starts.put_back(self._restart_taken)
                self._restart_taken = None

    def _repeat_steps(self, actions: dict[str, dict[str, Any]], repeat: int, observe_only: ObservedEntries | None,
                      restart: list[int] | None) -> ArrayStep:
        """:meth:`step_arrays_repeated` after its checks."""
        observe_every = any(group.sensors for group in self.groups.robots.values())
        reward = np.zeros(self.env_num)
        terminated = np.zeros(self.env_num, dtype=bool)
        truncated = np.zeros(self.env_num, dtype=bool)
        obs: dict[str, Any] = {}
        metrics: dict[int, dict[str, Any]] = {}
        diverged: list[int] = []
        failed: dict[int, str] = {}
        commands: Commands | None = None
        active: np.ndarray | None = None
        started: list[TaskCfg | None] | None = None
        new_rows: np.ndarray | None = None  # the restarted slots that got an episode
        step = 0
        while step < repeat:
            with self.guard.enter('step'):
                if commands is None:
                    commands = self.actions.parse_batched(actions)
                failed_commands = self._apply_commands(commands)
                # (the rest of the repeat, or its part up to the next step a robot's hooks act on,
                # in one recorded call where it can be: the slots that ended early were observed then)
                recorded = (self.recorded.advance(actions, commands, repeat - step, observe_only)
                            if not observe_every and not failed_commands else None)
                if recorded is not None:
                    done, early, early_obs = recorded
                else:
                    done, early, early_obs = self._advance(commands, 0 if observe_every else repeat - step - 1, failed_commands), None, {}
                step += done.steps
                if active is None:
                    active = self._active_mask(done.active)
                ended = done.active[(done.terminated | done.truncated)[done.active]] if done.any_ended or done.failed else done.active[:0]
                last = step == repeat
                observed = done.active if last or observe_every else ended
                if early is not None and len(early):
                    observed = np.setdiff1d(observed, early)
                    merge_rows(obs, early_obs, early)  # (each one's final observation, taken on the step it ended on)
                if restart is not None and (last or not len(self.table.active_slots())):
                    pre_taken, self._restart_taken = self._restart_taken, None
                    started, step_obs, new_rows = self.starts.restart_observed(
                        restart, pre_taken, observed, observe_only, functools.partial(self._observe_arrays_isolated, done, observed, observe_only))
                    last = True  # (the last step of this call: the restarted slots are observed with it)
                else:
                    step_obs = self._observe_arrays_isolated(done, observed, observe_only)
                self._raise_recorded()
            reward += done.reward
            if done.any_ended or done.failed:  # (else no flag is set: nothing to add)
                terminated |= done.terminated
                truncated |= done.truncated
            metrics.update(done.metrics)
            diverged += done.diverged
            failed.update(done.failed)
            if last and not obs:
                obs = step_obs  # (no episode ended before: the last step's observation is the result)
            else:
                merge_rows(obs, step_obs, (observed if new_rows is None else np.sort(np.concatenate((observed, new_rows))))
                           if last else (ended if early is None or not len(early) else np.setdiff1d(ended, early)))
            if len(ended) or done.failed:
                commands = None  # (other slots run now: parsed again for them)
            if last or not len(self.table.active_slots()):
                break
        assert active is not None  # (at least one step)
        return ArrayStep(obs, reward, terminated, truncated, active, metrics, tuple(diverged), failed, started)

    def _observe_arrays_isolated(self, done: Advance, observed: np.ndarray, observe_only: ObservedEntries | None) -> dict[str, Any]:
        """Array observations of ``observed``; a slot whose observation raises ends its episode as
        failed and is left out, every other slot is observed as usual."""
        if not len(observed):
            return {}
        try:
            return self.observer.observe_arrays(observed, observe_only)
        except Exception:
            failed = slots_that_fail(lambda slots: self.observer.observe_arrays(slots, observe_only), observed)
            self.ends.fail_running(done, failed)
            return self.observer.observe_arrays(np.setdiff1d(observed, list(failed)), observe_only)

    def _raise_recorded(self, step_result: Any = None) -> None:
        """With ``episode_errors='raise'``: raise the first error of an episode recorded as failed
        (carrying ``step_result``, what the complete call gave, a step's results or a reset's
        episodes: :func:`~internutopia.core.runner.failures.step_result_of`)."""
        if self._failed_errors:
            error, self._failed_errors = self._failed_errors[0], []
            if self.config.episode_errors == 'raise':
                if step_result is not None:
                    with contextlib.suppress(AttributeError, TypeError):  # (an exception type with __slots__)
                        setattr(error, STEP_RESULT_ATTRIBUTE, step_result)
                raise error

    def _observe_isolated(self, done: Advance) -> list[Any]:
        """Per-slot observations of the active slots; a slot whose observation raises ends its
        episode as failed (its row is ``None``), every other slot is observed as usual."""
        try:
            return self.observer.observe(done.active)
        except Exception:
            failed = slots_that_fail(self.observer.observe, done.active)
            if not failed:
                raise  # (it fails for the slots together only: not one slot's fault)
            self.ends.fail_running(done, failed)
            kept = np.setdiff1d(done.active, list(failed))
            rows = iter(self.observer.observe(kept))
            return [None if slot in failed else next(rows) for slot in done.active.tolist()]

    def _advance(self, commands: Commands, fuse: int = 0, applied: dict[int, Exception] | None = None) -> Advance:
        """Apply parsed commands, step physics once, run tasks, rewards and metrics, finish ended
        episodes. ``fuse``: up to that many more physics steps in the same call, as many as
        nothing but the physics has to run for (see :meth:`_quiet_steps`); ``Advance.steps``
        says how many ran. ``applied``: the commands were applied already (by the caller, whose
        :meth:`_apply_commands` gave these failed slots)."""
        failed = self._apply_commands(commands) if applied is None else applied
        steps = 1 + self._quiet_steps(commands, fuse) if fuse > 0 and not failed else 1
        if steps == 1:
            self.world.step()
        else:
            self.world.step(steps)
        self.world_steps += steps

        active = self.table.active_slots()
        self.table.count_step(active, steps)
        # A slot whose simulation diverged was put back to rest by the engine: its tasks and
        # metrics do not see that state, and its episode ends below. Other slots never notice.
        diverged, stepped = self._diverged(active)
        if failed:
            stepped = np.setdiff1d(stepped, list(failed))
        reward, terminated, truncated, tasks_stepped, term_failed = self.terms.step(stepped)
        failed.update(term_failed)
        ended = terminated | truncated if tasks_stepped else None  # (diverged slots were not stepped: never here)
        metrics: dict[int, Any] = {}
        metrics_raised: dict[int, Exception] = {}  # (episodes whose metrics raised as they ended: failed)
        if diverged:
            terminated[list(diverged)] = True
            metrics, metrics_raised = self.ends.finish_each(diverged, terminated, truncated, outcome='diverged')
            self.ends.restore_start_states(diverged)  # (one forward pass for them all)
            for slot in diverged:
                if slot in metrics_raised:  # (back at its start state, it ends with a failed record below)
                    failed[slot] = metrics_raised[slot]
                    self.table.set_status(slot, SlotStatus.ACTIVE)
        tasks_ended = ended is not None and bool(np.count_nonzero(ended))
        if ended is not None and tasks_ended:
            ended_metrics, raised = self.ends.finish_each([slot for slot in ended.nonzero()[0].tolist() if slot not in failed],
                                                          terminated, truncated)
            metrics.update(ended_metrics)
            failed.update(raised)
            metrics_raised.update(raised)
        done = Advance(active, reward, terminated, truncated, metrics, diverged, any_ended=tasks_ended or bool(diverged),
                       steps=steps)
        if failed:
            self.ends.fail_running(done, failed, metrics_raised)
        return done

    def _apply_commands(self, commands: Commands, before_physics_hooks: bool = True) -> dict[int, Exception]:
        """Before a physics step: the robots' ``begin_step`` hooks, the controllers' commands,
        the ``before_physics`` hooks (unless ``before_physics_hooks`` is false). The slots whose
        command raised, with the error (every other slot's command is applied)."""
        begin_step, before_physics = self.groups.step_hooks()
        if not before_physics_hooks:
            before_physics = []
        failed: dict[int, Exception] = {}
        phase = begin_command_phase()  # (what robots are told now is this step's command, not a held target)
        try:
            for hook in begin_step:
                hook()
            for controller, slots, batch in commands.values():
                if type(slots) is not np.ndarray:  # the dict API's per-slot lists
                    slots = np.asarray(slots, dtype=np.intp)
                try:
                    controller.apply(slots, batch if not isinstance(batch, Unbatched) else controller.batch(batch))
                except Exception as exc:
                    failed.update(apply_alone(controller, slots, batch, exc))
            for hook in before_physics:
                hook()
        finally:
            end_command_phase(phase)
        return failed

    def _quiet_steps(self, commands: Commands, limit: int) -> int:
        """How many physics steps after the coming one (at most ``limit``) nothing but the physics
        has to run for: every controller's command is idempotent (:attr:`BaseController.idempotent_apply`),
        no robot group's hooks would do anything (:meth:`BaseRobot.quiet_steps`), and no task,
        reward or metric would (:meth:`Terms.quiet_steps`). Those steps are then advanced in the
        same physics call as the coming one: fewer calls, the same motion and results."""
        active = self.table.active_slots()
        if not self.fuse_steps or not len(active):  # (with no episode running, a repeat stops after one step)
            return 0
        for controller, _, _ in commands.values():
            if not controller.idempotent_apply:
                return 0
        limit = self.groups.quiet_steps(limit)
        return self.terms.quiet_steps(active, limit) if limit > 0 else 0

    def _diverged(self, active: np.ndarray) -> tuple[tuple[int, ...], np.ndarray]:
        """The active slots whose simulation diverged this step, and the active slots that did not."""
        failed = self.world.failed_slots()
        if not len(failed):
            return (), active
        failed = failed[self.table.status[failed] == _ACTIVE]
        diverged = tuple(failed.tolist())
        return diverged, (np.setdiff1d(active, failed) if diverged else active)

    def _active_mask(self, active: np.ndarray) -> np.ndarray:
        """A new ``(env_num,)`` bool array, true at ``active`` (an :meth:`active_slots` array):
        a copy of one made when the active slots last changed (a copy costs less than building it)."""
        cached = self._active_mask_cache
        if cached is None or cached[0] is not active:
            mask = np.zeros(self.env_num, dtype=bool)
            mask[active] = True
            cached = self._active_mask_cache = (active, mask)
        return cached[1].copy()

    def warm_up(self, steps: int = 10, render: bool = True, physics: bool = True) -> None:
        """Advance the physics ``steps`` times with no commands, outside the episodes: robots run
        their own loops (balance policies); rewards, metrics and step counts see nothing, tasks
        only their ``warm_up_step`` (the per-slot ones run InternUtopia's ``pre_step``, as Isaac
        Sim's world does on each of its steps). ``physics=False`` (InternUtopia's render-only
        warm-up) does nothing: MuJoCo needs no warm-up frames."""
        if not physics:
            return
        with self.guard.enter('warm_up'):
            begin_step, before_physics = self.groups.step_hooks()
            slots = self.table.active_slots()
            for _ in range(steps):
                for hook in begin_step:
                    hook()
                for hook in before_physics:
                    hook()
                self.world.step()
                self.world_steps += 1
                self.terms.warm_up_step(slots)

    def close(self) -> None:
        """End the episodes still running (abandoned, recorded), release the world and flush the
        results file; print the run summary when results go somewhere and an episode finished (a
        summary of nothing says nothing)."""
        self.ends.abandon_running()
        self.results.print_summary()
        self.results.close()
        self.world.close()


__all__ = ['Advance', 'ArrayStep', 'Runner', 'SlotStatus']
