"""A reset's episodes: taken from the queue, loaded, placed and started, each slot's failure its own.

:class:`EpisodeStarts` is the runner's collaborator for :meth:`Runner.reset
<internutopia.core.runner.Runner.reset>`:

- every episode is checked and its structure prepared (types, files, scene, model, memory) before
  any slot changes; one that fails raises, its episodes back in the queue, and counts a try of
  that episode (after ``Config.episode_attempts`` tries it is recorded as failed instead);
- then the slots are placed; the episodes they were running are abandoned (recorded);
- then each episode starts (task, metrics, reward). One whose start raises fails alone: it goes
  back to the front of the queue while it has tries left, else it is recorded as failed, and
  its slot takes the next episode; every other slot is untouched. With
  ``Config.episode_errors='record'`` (the default) an episode recorded so also warns
  (``RuntimeWarning``: its index, its slot and the error), once, after its last try, so that a
  run without a results file learns of it; with ``'raise'`` the reset raises the error instead;
- where the caller asks for the new episodes' observations (``vec_env.Env.reset`` does), the
  first observation is part of the start: a slot whose observation raises (a sensor, a task's
  observation) has an episode that failed to start, as above;
- a ``KeyboardInterrupt`` from extension code leaves the episodes not yet started at the front of
  the queue, their slots empty.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from internutopia.core.backend.parts import SlotPart
from internutopia.core.config import TaskCfg
from internutopia.core.episode_queue import Episode
from internutopia.core.runner.checks import check_episode
from internutopia.core.runner.failures import failed_record, slots_that_fail, tag_episode
from internutopia.core.runner.observations import merge_rows
from internutopia.core.runner.slots import SlotStatus
from internutopia.core.scene import structure_key
from internutopia.core.util.caller import warn_per_episode

__all__ = ['EpisodeStarts']

_ACTIVE = int(SlotStatus.ACTIVE)
#: Episode families whose check is kept (a family is one sampler: a run has a few).
_FAMILIES_KEPT = 64
#: Episodes recorded as failed to start in one reset (at least; twice its slots when more) after
#: which the reset stops with an error: so many is the env's fault (a broken renderer), not the
#: episodes', and an endless queue (a sampler) would otherwise be drained forever.
FAILED_IN_ONE_RESET = 16


class EpisodeStarts:
    """Starts the episodes of a runner's resets (see the module docstring).

    Args:
        runner: the :class:`~internutopia.core.runner.Runner` whose slots, queue, world and records
            it works on (untyped here: the runner module imports this one).
    """

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        #: Per episode family (:class:`~internutopia.core.config.fresh_episodes.FreshEpisodes`), the
        #: structure key of its first episode, kept once that episode was checked and prepared.
        self._families: dict[Hashable, str] = {}
        #: More checks of every episode a reset takes, ``check(task, where)`` raising ``ValueError``
        #: for one this env cannot run (a Gymnasium env's robot): such an episode fails to load, as
        #: one of an unknown type does. (Once per family, as the types are.)
        self.episode_checks: list[Callable[[TaskCfg, str], None]] = []
        #: Episodes recorded as failed in the reset under way, and how many stop it.
        self._failed_in_reset = 0
        self._failed_limit = FAILED_IN_ONE_RESET

    def prepare(self, episodes: list[Episode | None]) -> None:
        """Do ahead, without changing any slot, all a reset with ``episodes`` could fail on.

        Every type is resolved, and every structure the world does not hold yet has its scene
        loaded and its model compiled (kept by the world for the reset) and its memory checked.
        A reset with these episodes right after compiles nothing. Used where a reset spans
        several runners (Ray): each prepares its share first, so one that fails leaves every
        runner as it was. The error raised carries the failing episode's queue index
        (:func:`~internutopia.core.runner.failures.tag_episode`).

        Raises:
            ValueError: an unknown type, a scene or model that does not load, not enough memory.
        """
        for episode in episodes:
            if episode is not None:
                self._prepare_one(episode)

    def _prepare_one(self, episode: Episode) -> None:
        task, where = episode.config, f'task_configs[{episode.index}]'

        def parts(task: TaskCfg = task, where: str = where) -> list[SlotPart]:
            return self.runner.groups.parts_for(task, where)

        try:
            # One episode of a family is checked and keyed for all (their types, files and
            # structure are the same: FreshEpisodes' promise).
            key = self._families.get(episode.family) if episode.family is not None else None
            if key is None:
                check_episode(episode)
                for check in self.episode_checks:
                    check(task, where)
                key = structure_key(task)
            self.runner.world.prepare(key, parts)
        except Exception as exc:
            tag_episode(exc, episode.index)
            raise
        if episode.family is not None and episode.family not in self._families:
            if len(self._families) >= _FAMILIES_KEPT:
                self._families.clear()
            self._families[episode.family] = key

    def _structure(self, episode: Episode) -> str:
        """The structure key of ``episode`` (prepared): its family's, else computed."""
        key = self._families.get(episode.family) if episode.family is not None else None
        return key if key is not None else structure_key(episode.config)

    def reset(self, slots: list[int], observe: Callable[[np.ndarray], Any] | None = None,
              taken: list[Episode | None] | None = None) -> tuple[list[Episode | None], list[tuple[np.ndarray, Any]]]:
        """Give each of ``slots`` (validated, distinct) the next episode, in order; the episodes
        the slots hold afterwards (``None`` where the queue ran out). See the module docstring.
        ``taken``: the episodes :meth:`take` gave for ``slots`` earlier (a caller that must know
        they load before it changes anything else), instead of taking them now.

        ``observe(slots)``, when given, makes the first observation part of the start: it is
        called with the slots holding a new episode, and a slot it raises for (alone) has an
        episode that failed to start, requeued or recorded as such, and takes the next episode.
        Returned with the episodes: the observations, ``(slots, observe(slots))`` per call that
        succeeded (more than one when a slot's observation failed).
        """
        self._failed_in_reset, self._failed_limit = 0, max(FAILED_IN_ONE_RESET, 2 * len(slots))
        taken = self.take(slots) if taken is None else list(taken)
        self._refill(slots, taken, self._reset_taken(slots, taken))
        observed: list[tuple[np.ndarray, Any]] = []
        pending = np.array([slot for slot, episode in zip(slots, taken, strict=True) if episode is not None], dtype=np.intp)
        while observe is not None and len(pending):
            try:
                observed.append((pending, observe(pending)))
                break
            except Exception:
                failed = slots_that_fail(observe, pending)
                if not failed:
                    raise  # (it fails for the slots together only: not one slot's fault)
            kept = pending[~np.isin(pending, list(failed))]
            if len(kept):
                observed.append((kept, observe(kept)))
            failures = [(self.runner.table.episodes[slot], slot, error) for slot, error in failed.items()]
            for slot in failed:
                self._empty(slot)
            self._episodes_failed(failures)
            self._refill(slots, taken, list(failed.items()))
            pending = np.array([slot for slot in failed if taken[slots.index(slot)] is not None], dtype=np.intp)
        # (kept until now: an episode whose first observation fails counts its tries like any start)
        for episode in taken:
            if episode is not None:
                self.runner.attempts.forget(episode.index)
        return taken, observed

    def _refill(self, slots: list[int], taken: list[Episode | None], errors: list[tuple[int, Exception]]) -> None:
        """Give each slot of ``errors`` (whose episode failed to start) the next episode that
        starts, or none when the queue runs out; ``taken`` (aligned to ``slots``) is updated."""
        while errors:
            again = [slot for slot, _ in errors]
            refill = [self._next_loadable() for _ in again]
            for slot, episode in zip(again, refill, strict=True):
                taken[slots.index(slot)] = episode
            errors = self._reset_taken(again, refill)

    def restart_observed(self, restart: list[int], taken: list[Episode | None] | None, observed: np.ndarray,
                         observe_only: Any, observe_step: Callable[[], dict[str, Any]]
                         ) -> tuple[list[TaskCfg | None], dict[str, Any], np.ndarray]:
        """A step's restarts (``step_arrays(reset_list=...)``): start the next episodes of
        ``restart`` (slots running none; ``taken``, their episodes :meth:`take` gave before the
        step) and observe them together with the step's ``observed`` slots: one observation of the
        union where everything observes (the usual case), else the step's slots isolated as a step
        does (``observe_step()``) and the new episodes' as a reset does (a slot whose first
        observation fails has an episode that failed to start). The new episodes' configs (aligned
        to ``restart``), the observation tree and the slots that got an episode."""
        runner = self.runner
        # (sensors keep their frames: a camera's image is taken in the step's order, before any new episode appears)
        separate = any(group.sensors for group in runner.groups.robots.values())
        merged: dict[str, Any] | None = None  # the observation of both, if it was made
        try_merged = not separate

        def first_observation(pending: np.ndarray) -> dict[str, Any]:
            nonlocal merged, try_merged
            if try_merged:  # (the first call covers every new episode: merged with the step's slots)
                try_merged = False
                try:
                    # (disjoint: the slots started ran no episode; together usually every slot, else
                    # sorted: union1d's unique costs more than a sort)
                    every = len(observed) + len(pending) == runner.env_num
                    union = runner._every_slot if every else np.sort(np.concatenate((observed, pending)))
                    merged = runner.observer.observe_arrays(union, observe_only)
                    return merged
                except Exception:
                    pass  # someone's observation fails: the step's slots and the new ones apart, below
            return runner.observer.observe_arrays(pending, observe_only)

        obs = observe_step() if separate else {}
        started, firsts = self.reset(restart, first_observation, taken)
        if merged is not None:
            obs = merged
        else:
            if not separate:
                obs = observe_step()
            for rows, part in firsts:
                merge_rows(obs, part, rows)
        new_rows = np.fromiter((slot for slot, e in zip(restart, started, strict=True) if e is not None), dtype=np.intp)
        return [e.config if e is not None else None for e in started], obs, new_rows

    def put_back(self, taken: list[Episode | None]) -> None:
        """Return the episodes of a :meth:`take` that were not started to the front of the queue, in order."""
        self.runner.queue.put_back([episode for episode in taken if episode is not None])

    def take(self, slots: list[int]) -> list[Episode | None]:
        """The next episode for each of ``slots``, each checked and prepared (changes no slot).

        On a failure every episode taken goes back to the queue and the error is raised, except
        an episode out of tries: that one is recorded as failed (and the error says so)."""
        taken: list[Episode | None] = []
        episode: Episode | None = None
        try:
            for _ in slots:
                episode = None
                episode = self.runner.queue.next()
                if episode is not None:
                    self._prepare_one(episode)
                taken.append(episode)
        except BaseException as exc:  # (KeyboardInterrupt too: no episode taken is lost)
            back = [e for e in taken if e is not None]
            if episode is not None and isinstance(exc, Exception):
                tries, again = self.runner.attempts.fail(episode.index, episode.refused is None)
                if again:
                    back.append(episode)
                else:
                    self._record_failed(episode, None, exc, tries)
                    _note(exc, f'; episode {episode.index} failed to load {tries} time(s) and is recorded as failed '
                               '(Config.episode_attempts); the next reset goes on with the next episode')
            elif episode is not None:
                back.append(episode)
            self.runner.queue.put_back(back)
            raise
        return taken

    def _next_loadable(self) -> Episode | None:
        """The next episode that loads, for a slot whose episode failed to start (never raises:
        one that does not load is tried again or recorded as failed, as its tries allow)."""
        while True:
            episode = self.runner.queue.next()
            if episode is None:
                return None
            try:
                self._prepare_one(episode)
                return episode
            except Exception as exc:
                self._episodes_failed([(episode, None, exc)])
            except BaseException:  # Ctrl-C: the episode goes back first
                self.runner.queue.put_back([episode])
                raise

    def _episodes_failed(self, failures: Sequence[tuple[Episode, int | None, Exception]]) -> None:
        """Each ``(episode, slot, error)`` of ``failures`` failed to load or start: those with tries
        left go back to the front of the queue in their order, the others are recorded as failed
        (past the reset's limit of such records, the reset stops: ``RuntimeError``)."""
        again = []
        for episode, slot, exc in failures:
            tries, retry = self.runner.attempts.fail(episode.index, episode.refused is None)
            if retry:
                again.append(episode)
            else:
                self._record_failed(episode, slot, exc, tries)
                self.runner._failed_errors.append(exc)
                self._failed_in_reset += 1
                if self.runner.config.episode_errors == 'record':  # ('raise': the reset raises it)
                    _warn_failed(episode.index, slot, exc, tries)
        if again:
            self.runner.queue.put_back(again)
        if self._failed_in_reset >= self._failed_limit:
            last = self.runner._failed_errors[-1]
            self.runner._failed_errors.clear()  # (raised here: not again by the next call)
            raise RuntimeError(f'{self._failed_in_reset} episodes failed to start in this reset and were recorded as failed '
                               f'(the last: {type(last).__name__}: {last}); so many is unlikely to be the episodes\' fault, '
                               'so the reset stops here: the slots it did not fill are empty') from last

    def _record_failed(self, episode: Episode, slot: int | None, exc: BaseException, tries: int) -> None:
        self.runner.results.write(failed_record(episode.index, slot, episode.config.type, episode.config.scene_asset_path, exc,
                                         attempts=tries, steps=0))

    def _reset_taken(self, slots: list[int], taken: list[Episode | None]) -> list[tuple[int, Exception]]:
        """Place and start ``taken`` (loaded) in ``slots``; the slots whose episode failed to
        start, with the error (each such episode already requeued or recorded; the slot is empty)."""
        table = self.runner.table
        structures = list(table.structures)
        for slot, episode in zip(slots, taken, strict=True):
            structures[slot] = self._structure(episode) if episode is not None else None
        try:
            if structures != table.structures or not self.runner.world.built:
                # (every slot's config, only when the world's layout changes: usually it does not)
                configs: list[TaskCfg | None] = [e.config if e is not None else None for e in table.episodes]
                for slot, episode in zip(slots, taken, strict=True):
                    configs[slot] = episode.config if episode is not None else None
                self.runner.groups.place(table, slots, configs, structures)
        except BaseException:
            self.runner.queue.put_back([e for e in taken if e is not None])
            raise
        # Nothing can fail for more than its own slot from here on: the episodes these slots
        # were running are abandoned, and each new episode starts or fails alone.
        for slot in slots:
            if table.status[slot] == _ACTIVE:
                self.runner.ends.finish(slot, False, False, outcome='abandoned')
        # Write every reset slot's state first (each entity group once for all its slots), then
        # one forward pass for the whole world, then start tasks (each task object once for all
        # its slots), metrics and rewards (they read poses): a reset of k slots costs one pass of
        # each, not k.
        failed: list[tuple[int, Exception]] = []
        placed = self.place(slots, taken, failed)
        self.runner.world.forward(np.asarray(slots))
        started: list[int] = []
        start_failed: dict[int, Exception] = {}
        interrupted: BaseException | None = None
        try:
            self.runner.terms.start_many([slot for slot, _ in placed], [e.config for _, e in placed], started, start_failed)
        except BaseException as exc:  # Ctrl-C inside an extension: the episodes not started go back first
            interrupted = exc
        done = set(started)
        if interrupted is not None:
            waiting = [(slot, e) for slot, e in placed if slot not in done and slot not in start_failed]
            for slot, _ in waiting:
                self._empty(slot)
            self.runner.queue.put_back([e for _, e in waiting])
        failed.extend((slot, start_failed[slot]) for slot, _ in placed if slot in start_failed)
        self._activate([slot for slot, _ in placed if slot in done])
        failures = []
        for slot, error in failed:
            episode = taken[slots.index(slot)]
            assert episode is not None  # (only slots given an episode fail)
            self._empty(slot)
            failures.append((episode, slot, error))
        self._episodes_failed(failures)
        if interrupted is not None:
            raise interrupted
        return failed

    def place(self, slots: list[int], taken: list[Episode | None],
               failed: list[tuple[int, Exception]]) -> list[tuple[int, Episode]]:
        """Hand each of ``slots`` its episode and write its start state (no forward pass): each
        slot's rest state, then every robot and object group's start poses once for all its
        slots. The slots given an episode, with it; those whose placing raised go to ``failed``
        (one group's error is found slot by slot, so it fails only its own slots)."""
        runner, table = self.runner, self.runner.table
        placed: list[tuple[int, Episode]] = []
        # Per entity group (by identity): the group, its slots and their entity configs.
        resets: dict[int, tuple[Any, list[int], list[Any]]] = {}
        for slot, episode in zip(slots, taken, strict=True):
            runner.terms.leave(slot)
            table.episodes[slot] = episode
            table.steps[slot] = 0
            if episode is None:
                table.set_status(slot, SlotStatus.EMPTY)
                continue
            task = episode.config
            try:
                runner.world.reset_slot_state(slot)
                entities: list[tuple[Any, Any]] = [(table.slot_robots[slot][entity.name], entity) for entity in task.robots]
                entities += [(table.slot_objects[slot][obj.name], obj) for obj in task.objects]
            except Exception as exc:
                failed.append((slot, exc))
                continue
            for group, entity in entities:
                _, members, configs = resets.setdefault(id(group), (group, [], []))
                members.append(slot)
                configs.append(entity)
            placed.append((slot, episode))
        broken: set[int] = set()
        for group, members, configs in resets.values():
            try:
                group.reset_slots(np.asarray(members), configs)
            except Exception:  # find the slots that fail, each alone
                for slot, config in zip(members, configs, strict=True):
                    if slot in broken:
                        continue
                    try:
                        group.reset_slots(np.array([slot]), [config])
                    except Exception as exc:
                        failed.append((slot, exc))
                        broken.add(slot)
        return [(slot, episode) for slot, episode in placed if slot not in broken]

    def _activate(self, started: list[int]) -> None:
        """The slots of ``started`` run their episodes from now on (their episodes' tries are
        forgotten at the end of the reset, once their first observations are taken)."""
        table, now = self.runner.table, time.perf_counter()
        for slot in started:
            table.set_status(slot, SlotStatus.ACTIVE)
            table.started_at[slot] = now

    def _empty(self, slot: int) -> None:
        """``slot`` holds no episode (its episode failed to start or was handed back)."""
        self.runner.terms.leave(slot)
        self.runner.table.episodes[slot] = None
        self.runner.table.set_status(slot, SlotStatus.EMPTY)



def _warn_failed(index: int, slot: int | None, exc: BaseException, tries: int) -> None:
    """Tell the caller that episode ``index`` is recorded as failed after its last try (with
    ``Config.episode_errors='record'`` a reset goes on, and with ``metrics_save_path='none'`` the
    record is nowhere to be read)."""
    what = f'failed to start in slot {slot}' if slot is not None else 'failed to load (it had no slot yet)'
    # (its text names the episode: kept out of the caller's warning registry, which would hold one
    # entry per failed episode for good)
    warn_per_episode(f'episode {index} {what} ({tries} attempt(s), Config.episode_attempts) and is recorded as failed: '
                     f'{type(exc).__name__}: {exc}', RuntimeWarning)


def _note(exc: BaseException, text: str) -> None:
    """Append ``text`` to ``exc``'s message (its first argument, when that is text)."""
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (exc.args[0] + text, *exc.args[1:])
