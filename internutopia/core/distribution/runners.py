"""``RayRunners``: the runners of a ``DistributedEnv``, ``proc_num`` Ray runner actors and one queue actor.

``vec_env.Env(config.distribute(RayDistributionCfg(proc_num=P)))`` returns a ``DistributedEnv``
(:mod:`internutopia.core.distribution.env`) driving one of these. It has ``P * env_num`` slots;
global slot ``g`` is local slot ``g % env_num`` of runner ``g // env_num``. One queue actor holds
the episodes; the driver takes each reset's episodes from it in the caller's order, so every episode
runs once, in the same slots as on one process.

Per call (arguments already checked by ``vec_env.Env``, the same code as on one process):

- ``reset(ids)``: the episodes are taken from the queue actor and checked here (unknown types
  raise before anything changes); then every runner concerned prepares its share (loads and
  compiles the structures it lacks, checks memory: ``Runner.prepare``), all concurrently, and only
  when every runner is ready does any runner reset its share, all concurrently. So a missing scene
  for one slot raises before any slot changes, and the episodes go back to the queue.
- ``step(actions)``: each runner with a command for an active slot validates its slice
  (``Runner.parse_actions``), all concurrently, and only when every slice is valid are the runners
  stepped, all concurrently; so a bad name raises ``ValueError`` before any world moves. Runners
  with no active slot are not called.

Faults: a runner that dies (``ray.exceptions.RayActorError``), or hangs (takes longer than
``step_timeout_s`` over a step or ``reset_timeout_s`` over a reset), is killed and replaced by a new
actor; the episodes it was running go back to the front of the queue (each at most
``Config.episode_attempts`` times in all, then it is recorded as failed), and the step reports, for
each hit slot, ``None`` in obs/reward/terminated/truncated and ``info[g] = {'runner_failed': True,
'requeued_episode': index, 'runner_id': r}`` (``'failed_episode'`` for one out of tries); those
slots are empty until reset. Other runners' results are returned normally. The driver tracks which
episode each slot holds, so no episode is lost, and one counts as finished (its metrics record
written, ``terminated``/``truncated`` reported) only when the driver has received that step.

The actors themselves (starting Ray, placing, awaiting, replacing and killing them) are the
:class:`~internutopia.core.distribution.pool.ActorPool`'s; what it answers without running
episodes (runner info, observations, renders, warm-up) is
:class:`~internutopia.core.distribution.queries.RunnerQueries`', and what it does when a runner
fails, :class:`~internutopia.core.distribution.recovery.RunnerRecovery`'s.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any, NoReturn

import numpy as np

from internutopia.core.config import DistributedConfig, TaskCfg
from internutopia.core.distribution.actors import WARNED
from internutopia.core.distribution.calls import RunnerHung, get_result, send_actions, unwrap
from internutopia.core.distribution.extensions import Extensions, collect, pack
from internutopia.core.distribution.ledger import FailureLedger
from internutopia.core.distribution.pool import ActorPool, import_ray
from internutopia.core.distribution.queries import RunnerQueries
from internutopia.core.distribution.recovery import RunnerRecovery, check_taken
from internutopia.core.distribution.runner_warnings import RunnerWarnings, failed_start_slot
from internutopia.core.episode_queue import Episode
from internutopia.core.results import ResultsWriter
from internutopia.core.runner import ArrayStep, RunnerSet, SlotStatus
from internutopia.core.runner.failures import STEP_RESULT_ATTRIBUTE
from internutopia.core.runner.guard import CallGuard
from internutopia.core.runner.observations import ObservedEntries
from internutopia.core.util.memory import RUNNER_PROCESS_BYTES, check_runners_fit

__all__ = ['RayRunners']

logger = logging.getLogger(__name__)


def _no_command(entry: Any) -> bool:
    return entry is None or (isinstance(entry, dict) and not entry)


#: Bytes the driver keeps per slot of every runner (its status, episode, step count and start
#: time, with their Python objects): an upper estimate, for the check of ``proc_num``.
_BOOK_BYTES_PER_SLOT = 64
#: The longest a close waits for the runners' records of the episodes still running (all runners at once).
_CLOSE_RECORDS_TIMEOUT_S = 10.0
#: What ``step_arrays``/``reset_arrays`` say on Ray (docs/distributed.md).
_NO_ARRAYS = ("{call}() is not available on a Ray-distributed env: its worlds live in its runners' processes; "
              'use {instead}() (per-slot observations) or get_observations()')


class RayRunners(RunnerQueries, RunnerRecovery, RunnerSet):
    """``proc_num`` runner actors of ``env_num`` slots each, and one queue actor, as one set of runners.

    Global slot ``g`` is local slot ``g % env_num`` of runner ``g // env_num``. See the module
    docstring and ``docs/distributed.md``.

    Args:
        config: a :class:`DistributedConfig` (from ``Config.distribute``); never modified.
        episodes: optional replacement for ``config.task_configs`` (any iterable of ``TaskCfg``
            that can be pickled, e.g. a list or ``itertools.cycle(tasks)``; not a generator).
    """

    def __init__(self, config: DistributedConfig, episodes: Iterable[TaskCfg] | None = None) -> None:
        if not isinstance(config, DistributedConfig):
            raise TypeError(f'DistributedEnv expects a DistributedConfig, got {type(config).__name__}')
        import_ray()
        self._config = config
        self._dist = config.distribution_config
        self._local_num = config.env_num
        self._proc_num = self._dist.proc_num
        total = self.env_num = self._proc_num * self._local_num
        # (Before the driver's books of every slot and before any process starts: a mistyped
        # proc_num is an error naming it, not a MemoryError or a machine out of memory.)
        books = self._local_num * _BOOK_BYTES_PER_SLOT
        if self._dist.head_address is None:
            check_runners_fit(self._proc_num, RUNNER_PROCESS_BYTES + books, 'its runner processes on this machine')
        else:
            check_runners_fit(self._proc_num, books, "this process's books of the runners' slots")
        self._status = np.full(total, SlotStatus.EMPTY, dtype=np.int8)
        self._episodes: list[Episode | None] = [None] * total
        #: Per slot, the steps of its episode and when it started (for the record of an episode
        #: the driver must write itself: one abandoned by a reset its runner died in).
        self._steps = np.zeros(total, dtype=np.int64)
        self._started_at = np.zeros(total)
        #: Names each runner reset to the queue actor (see ``QueueActor.reclaim``).
        self._ticket = 0
        self._failures: dict[int, dict[str, Any]] = {}
        #: The runners' step options: ``parsed=True`` while a recording runs (see ``ship_parsed_actions``).
        self._step_options: dict[str, Any] = {}
        self.parsed_actions: list[Any] = [None] * total
        self.guard = CallGuard('this Env')
        self._closed = False
        self._queue_len_at_close = 0
        self._extensions: Extensions = collect()
        source = episodes if episodes is not None else config.task_configs
        try:
            packed_source = pack(source)
            # (The runners record failures; the driver raises them when episode_errors says so.)
            self._runner_config = pack(config.base_config(metrics_save_path='none', task_configs=config.task_configs[:1],
                                                          episode_errors='record'))
        except Exception as exc:
            hint = ''.join(f'\n  {line}' for line in self._extensions.skipped)
            raise TypeError(f'the episodes cannot be pickled for the Ray actors: {exc}. The source must be a list or '
                            f'another picklable iterable (itertools.cycle, not a generator) of TaskCfg whose classes '
                            f'are defined in importable modules' + (f'; not shippable:{hint}' if hint else '')) from exc
        self._results = ResultsWriter(config.metrics_save_path, record_format=config.metrics_save_format)
        #: Tries and records of the episodes that failed to load or were on a runner that died or hung.
        self._ledger = FailureLedger(config.episode_attempts, self._results, config.episode_errors == 'raise')
        self._runner_warnings = RunnerWarnings(self._local_num, self._ledger.raise_failed)
        try:
            self._pool = ActorPool(config, self._extensions, self._runner_config, packed_source)
        except BaseException:
            self._results.close()
            raise

    # ------------------------------------------------------------------------------------------
    # runners that die or hang
    def _wait_ready(self, runner_id: int) -> None:
        self._pool.wait_ready(runner_id)

    def _all_ready(self) -> None:
        """Wait until every runner has built its world (a runner restarted since the last call
        still starting: at most its start-up timeout), before a call's own timeout starts, so that
        time spent on one runner's start is never taken from another's answer."""
        for r in range(self._proc_num):
            self._wait_ready(r)

    def _submit_reset(self, runner_id: int, local: list[int], episodes: list[Episode | None]) -> tuple[int, Any]:
        """Start runner ``runner_id``'s reset of its ``local`` slots with ``episodes``: its ticket and ref."""
        self._ticket += 1
        return self._ticket, self._pool.actors[runner_id].reset.remote(local, episodes, self._ticket)

    def _warn(self, warned: list[tuple[type[Warning], str]], runner_id: int | None = None) -> None:
        """Warn, here, what runner ``runner_id`` warned (its own output is not shown)."""
        self._runner_warnings.warn(warned, runner_id)

    def _raise_invalid(self, error: ValueError) -> NoReturn:
        """Warn what the runner warned before finding ``error`` (see ``RunnerActor._invalid``), then raise it."""
        self._warn(getattr(error, WARNED, None) or [])
        raise error

    def _teardown(self) -> None:
        self._pool.teardown()
        self._results.close()

    # ------------------------------------------------------------------------------------------
    def _slices(self, slots: list[int]) -> dict[int, list[int]]:
        """Positions in ``slots`` grouped by runner, in runner order, keeping the caller's order within."""
        groups: dict[int, list[int]] = {}
        for k, g in enumerate(slots):
            groups.setdefault(g // self._local_num, []).append(k)
        return dict(sorted(groups.items()))

    def reset(self, slots: list[int], observe: bool = True) -> tuple[list[Any], list[TaskCfg | None]]:
        """Give the global ``slots`` the next episodes, in the caller's order; each runner resets its
        share, all concurrently. The observations come back whatever ``observe`` says (they travel
        with the runners' answers).

        Raises:
            ValueError: an episode of an unregistered type, or whose scene does not load; nothing
                changes (after ``Config.episode_attempts`` such tries the episode is recorded as
                failed instead of going back to the queue).
        """
        with self.guard.enter('reset'):
            return self._reset(slots)

    def _reset(self, slots: list[int]) -> tuple[list[Any], list[TaskCfg | None]]:
        import ray

        lost = (ray.exceptions.RayActorError, RunnerHung)
        self._all_ready()
        deadline = time.monotonic() + self._dist.reset_timeout_s
        episodes: list[Episode | None] = self._take(slots)
        try:
            check_taken(episodes)
        except Exception as exc:
            self._give_back(episodes, exc)
            raise
        groups = self._slices(slots)
        self._prepare(slots, episodes, groups, deadline)
        obs: list[Any] = [None] * len(slots)
        held: list[Episode | None] = [None] * len(slots)  # (what each slot runs after this reset)
        refs = {}
        for r, positions in groups.items():
            self._wait_ready(r)
            refs[r] = self._submit_reset(r, [slots[k] % self._local_num for k in positions],
                                         [episodes[k] for k in positions])
        error: BaseException | None = None
        records: list[dict[str, Any]] = []
        warned_by: list[tuple[int, type[Warning], str]] = []  # (runner id, category, message)
        started = False
        for r, positions in groups.items():
            mine = [episodes[k] for k in positions]
            ticket, ref = refs[r]
            try:
                result = self._get_runner(ref, deadline, r)
            except lost as exc:
                # The runner died or hung, and what it did in this reset with it: the episodes
                # the caller is replacing are abandoned (recorded here), the reset's episodes and
                # the runner's other running ones requeued; this reset runs again on a new runner.
                self._lost_in_reset(r, [slots[k] for k in positions], ticket, mine, exc)
                try:
                    result = self._reset_again(r, [slots[k] for k in positions])
                except Exception as exc2:  # (the episodes are back in the queue, or recorded)
                    error = error or exc2
                    continue
            except Exception as exc:  # the runner put its episodes back itself
                error = error or exc
                continue
            observations, written, now_held, warned = result
            warned_by.extend((r, category, message) for category, message in warned)
            started = True
            for record in written:
                record['slot'] = r * self._local_num + record['slot'] if record.get('slot') is not None else None
            records.extend(written)
            for k, observation, episode in zip(positions, observations, now_held, strict=True):
                g = slots[k]
                held[k] = episode
                self._episodes[g] = episode
                self._status[g] = SlotStatus.ACTIVE if episode is not None else SlotStatus.EMPTY
                self._steps[g], self._started_at[g] = 0, time.perf_counter()
                self._failures.pop(g, None)
                obs[k] = observation
        # The records, and the warnings of failed starts, in the caller's order of slots, as one
        # process gives them (not runner by runner).
        order = {g: k for k, g in enumerate(slots)}
        records.sort(key=lambda record: order.get(record['slot'], len(slots)))
        for record in records:
            self._ledger.write(record)

        def position(item: tuple[int, type[Warning], str]) -> int:
            slot = failed_start_slot(item[2])
            return -1 if slot is None else order.get(item[0] * self._local_num + slot, -1)

        for r, category, message in sorted(warned_by, key=position):
            self._warn([(category, message)], r)
        info = [e.config if e is not None else None for e in held]
        if error is not None:
            if started:  # other runners' slots started their episodes: the env steps on with them
                setattr(error, STEP_RESULT_ATTRIBUTE, (obs, info))
            raise error
        self._ledger.check(records, (obs, info))
        return obs, info

    def _prepare(self, slots: list[int], episodes: list[Episode | None], groups: dict[int, list[int]],
                 deadline: float | None = None) -> None:
        """Every runner in ``groups`` prepares its share of ``episodes``, concurrently; on any error the
        episodes go back to the queue and the error is raised, with no slot changed anywhere."""
        import ray

        refs = {}
        for r, positions in groups.items():
            mine = [episodes[k] for k in positions]
            if any(e is not None for e in mine):
                self._wait_ready(r)
                refs[r] = self._pool.actors[r].prepare.remote(mine)
        error: BaseException | None = None
        for r, ref in refs.items():
            try:
                self._get_runner(ref, deadline, r)
            except (ray.exceptions.RayActorError, RunnerHung) as exc:
                # The runner died or hung: it is replaced (its running episodes requeued) and the
                # reset prepares on the new one when it gets there.
                self._runner_failed(r, reason=exc)
            except Exception as exc:
                error = error or exc
        if error is not None:
            self._give_back(episodes, error)
            raise error

    def _get_runner(self, ref: Any, deadline: float | None = None, runner_id: int | None = None) -> Any:
        return get_result(ref, deadline, runner_id)

    def _unwrap(self, call: Any) -> Any:
        return unwrap(call)

    def reset_arrays(self, slots: list[int], only: ObservedEntries | None = None) -> tuple[dict[str, Any] | None, list[TaskCfg | None]]:
        """Not on Ray: a ``NotImplementedError`` saying what to use instead."""
        raise NotImplementedError(_NO_ARRAYS.format(call='reset_arrays', instead='reset'))

    def step_arrays(self, actions: dict[str, dict[str, Any]], observe: bool = True,
                    observe_only: ObservedEntries | None = None, repeat: int = 1,
                    restart: list[int] | None = None) -> ArrayStep:
        """Not on Ray: a ``NotImplementedError`` saying what to use instead."""
        raise NotImplementedError(_NO_ARRAYS.format(call='step_arrays', instead='step'))

    def step(self, actions: list[Any]) -> tuple[list, list, list, list, list]:
        """Advance every runner with an active slot by one step, concurrently.

        A slot whose runner died or hung reports ``None`` everywhere but ``info[g] =
        {'runner_failed': True, 'requeued_episode': index, 'runner_id': r}``, once.

        Raises:
            ValueError: an unknown robot/controller name or bad arguments for an active slot
                (message with global ids); raised before any runner is stepped.
        """
        with self.guard.enter('step'):
            return self._step(actions)

    def _step(self, actions: list[Any]) -> tuple[list, list, list, list, list]:
        import ray

        lost = (ray.exceptions.RayActorError, RunnerHung)
        n = self._local_num
        active = self._status == SlotStatus.ACTIVE
        # (Entries of slots that run no episode are ignored, as on one process: not sent at all, so
        # what Ray cannot serialize there cannot fail a runner's step after another's has moved.)
        running = active.tolist()
        chunks = [[entry if running[r * n + i] else None for i, entry in enumerate(actions[r * n:(r + 1) * n])]
                  for r in range(self._proc_num)]
        self._all_ready()
        deadline = time.monotonic() + self._dist.step_timeout_s

        # 1. every runner with a command for an active slot validates its slice; nothing moves yet.
        # (When only one runner has active slots, its step validates before moving: no extra call.)
        while True:
            checks = {}
            busy = [r for r in range(self._proc_num) if active[r * n:(r + 1) * n].any()]
            for r in busy if len(busy) > 1 else ():
                if any(active[r * n + i] and not _no_command(chunks[r][i]) for i in range(n)):
                    self._wait_ready(r)
                    checks[r] = send_actions(self._pool.actors[r].check, chunks[r], r * n)
            warned: dict[int, list[tuple[type[Warning], str]]] = {}
            invalid: dict[int, ValueError] = {}
            dead: dict[int, BaseException] = {}
            for r, ref in checks.items():
                try:
                    warned[r] = self._get_runner(ref, deadline, r) or []
                except lost as exc:
                    dead[r] = exc
                except ValueError as exc:
                    invalid[r] = exc
            for r, why in dead.items():
                self._runner_failed(r, reason=why)
            if invalid:
                # The first bad slot's error, after the warnings of the slots before it, as on one
                # process (a check keeps no warning: when all are valid, the step warns them).
                first = min(invalid)
                for r in sorted(warned):
                    if r < first:
                        self._warn(warned[r])
                self._raise_invalid(invalid[first])
            if not dead:
                break
            active = self._status == SlotStatus.ACTIVE  # the dead runners' slots are empty now

        # 2. step every runner that has an active slot, concurrently.
        total = self.env_num
        obs: list = [None] * total
        reward: list = [None] * total
        terminated: list = [None] * total
        truncated: list = [None] * total
        info: list = [None] * total
        refs = {}
        self.parsed_actions = [None] * total
        for r in range(self._proc_num):
            if active[r * n:(r + 1) * n].any():
                self._wait_ready(r)
                refs[r] = send_actions(self._pool.actors[r].step, chunks[r], r * n, **self._step_options)
        error: BaseException | None = None
        failed_now: list[dict[str, Any]] = []
        for r, ref in refs.items():
            try:
                result = self._get_runner(ref, deadline, r)
            except lost as exc:
                self._runner_failed(r, reason=exc)
                continue
            except ValueError as exc:  # only when this was the one runner stepped: nothing moved
                if len(refs) == 1:
                    self._raise_invalid(exc)
                error = error or exc
                continue
            except Exception as exc:  # an error in the user's task or robot code: re-raised below
                error = error or exc
                continue
            lo = r * n
            self._steps[lo:lo + n][active[lo:lo + n]] += 1
            for out, part in zip((obs, reward, terminated, truncated, info), result[:5], strict=True):
                out[lo:lo + n] = part
            for i in range(n):
                if terminated[lo + i] or truncated[lo + i]:
                    self._status[lo + i] = SlotStatus.DONE
            for record in result[5]:
                record['slot'] = lo + record['slot'] if record.get('slot') is not None else None
                self._ledger.write(record)
                if record.get('outcome') == 'failed':
                    failed_now.append(record)
            self._warn(result[6], r)
            if result[7] is not None:
                self.parsed_actions[lo:lo + n] = result[7]
        for g, note in self._failures.items():
            info[g] = dict(note)
        self._failures.clear()
        if error is not None:
            raise error
        self._ledger.check(failed_now, (obs, reward, terminated, truncated, info))
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        """Kill the runner and queue actors and shut down the Ray this env started (or connected to)."""
        import ray

        if self._closed:
            return
        # (Ray shut down by the caller first: asking an actor would start a new Ray, and leave it running.)
        connected = ray.is_initialized()
        try:
            self._queue_len_at_close = self.queue_len() if connected and self._pool.queue is not None else 0
        except Exception:  # the queue actor is gone already: nothing more will be handed out
            self._queue_len_at_close = 0
        self._closed = True
        try:
            self._abandon_running(connected)
            self._results.print_summary()  # (as one process prints it at close: Runner.close)
        finally:
            self._teardown()

    def _abandon_running(self, connected: bool = True) -> None:
        """End the episodes still running as abandoned, each with its record, as one process does
        at close: each runner computes its own (all at once, at most ``_CLOSE_RECORDS_TIMEOUT_S``
        in all); for a runner that does not answer, or when Ray is no longer ``connected``, the
        driver writes them without metrics."""
        running: dict[int, list[int]] = {}
        for g in np.flatnonzero(self._status == SlotStatus.ACTIVE).tolist():
            running.setdefault(g // self._local_num, []).append(g)
        refs: dict[int, Any] = {}
        for r in running:
            try:
                if not connected:
                    raise RuntimeError('Ray was shut down before the env was closed')
                refs[r] = self._pool.actors[r].abandon_running.remote()
            except Exception as exc:  # noqa: BLE001 - its records are written here instead
                refs[r] = exc
        deadline = time.monotonic() + _CLOSE_RECORDS_TIMEOUT_S
        for r, ref in refs.items():
            try:
                if isinstance(ref, Exception):
                    raise ref
                records = get_result(ref, deadline, r)
            except Exception as exc:  # noqa: BLE001 - dead, hung or failing: the driver records them
                why = f'runner {r} did not answer at close ({type(exc).__name__})' if connected else str(exc)
                records = [self._abandoned_record(g, f'{why}: its metrics were not read') for g in running[r]]
            else:
                for record in records:
                    record['slot'] = r * self._local_num + record['slot'] if record.get('slot') is not None else None
            for record in records:
                self._ledger.write(record)
            for g in running[r]:
                self._status[g] = SlotStatus.DONE
