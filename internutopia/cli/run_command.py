"""``internutopia run``: a config run headless with scripted actions (:mod:`internutopia.cli.policies`),
a progress bar and a summary.

Episodes are counted from the run's results (one record per episode that ended, however it
ended): *finished* are those that ended as their task says (success or not, a step limit
included); *failed* ones raised (in an extension's code, or failed to load), *diverged* ones had
their simulation blow up, *abandoned* ones were reset while running. The progress bar and the
summary count the same: ``episodes finished: 2/3 (1 failed)``.

Ctrl-C stops the run after the current step: the env is closed (every episode that ended is in the
results file) and the summary printed. From then on, until :func:`run` returns (and gives Ctrl-C
back to what handled it before), a second Ctrl-C ends the process at once, with a one-line
message, no summary and exit status 130 (:func:`stop_at_once`).
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from internutopia.cli.config_file import ConfigError, load_config
from internutopia.cli.policies import ScriptedPolicy, navigation_action


def default_actions(env: Any) -> list[dict | None]:
    """Per slot, the navigation action of ``internutopia run`` (``move_to_point`` to the goal, or
    ``None``); :class:`~internutopia.cli.policies.ScriptedPolicy` adds pick and place."""
    out: list[dict | None] = []
    for slot, episode in enumerate(env.runner.episodes):
        out.append(navigation_action(episode.config, env.runner.slot_robots[slot]) if episode is not None else None)
    return out


#: The ``outcome`` of an episode's record that says how it ended, when not as its task says
#: (:mod:`internutopia.core.results`), in the order the summary names them.
OUTCOMES = ('failed', 'diverged', 'abandoned')


def episode_counts(results: Any) -> dict[str, int]:
    """How the episodes of a run so far ended, from its results writer (``env.runner.results``; every
    record counts, written to a file or not): ``ended`` (all of them), ``finished`` (as their task
    says), and one count per :data:`OUTCOMES` entry."""
    summary = results.summary()
    outcomes = summary['outcomes']
    counts = {'ended': summary['records']}
    counts.update({kind: int(outcomes.get(kind, 0)) for kind in OUTCOMES})
    counts['finished'] = counts['ended'] - sum(int(n) for n in outcomes.values())
    return counts


def _not_finished(counts: dict[str, Any]) -> str:
    """``'1 failed, 2 diverged'``: the episodes that ended otherwise than as their task says ('' for none)."""
    return ', '.join(f'{counts[kind]} {kind}' for kind in OUTCOMES if counts.get(kind))


class _Progress:
    """Episodes finished / total and env-steps/s: tqdm when installed, else text lines on stderr.
    Episodes that ended otherwise (failed, diverged, abandoned) are not counted as finished: the
    bar says how many of those there were."""

    def __init__(self, total: int | None, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self.bar = None
        self._last = 0.0
        self._others = ''
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit='ep', desc='episodes', file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                self.bar = None

    def update(self, counts: dict[str, int], new: int, rate: float, steps: int, force: bool = False) -> None:
        """``counts``: :func:`episode_counts`; ``new``: episodes finished since the last update."""
        if not self.enabled:
            return
        others = _not_finished(counts)
        if self.bar is not None:
            if new:
                self.bar.update(new)
            now = time.perf_counter()
            if force or others != self._others or now - self._last > 0.5:
                self.bar.set_postfix_str((f'{others}, ' if others else '') + f'{rate:,.0f} env-steps/s, {steps} steps',
                                         refresh=True)
                self._last, self._others = now, others
            return
        now = time.perf_counter()
        if force or now - self._last > 2.0:
            total = '?' if self.total is None else self.total
            print(f"[internutopia] episodes {counts['finished']}/{total}" + (f' ({others})' if others else '')
                  + f'  {rate:,.0f} env-steps/s  ({steps} steps)', file=sys.stderr, flush=True)
            self._last = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def stop_at_once(results: str) -> None:
    """Make the next Ctrl-C end the process at once (exit status 130): after a first Ctrl-C the
    user wants out, and a traceback from wherever the second one lands (closing the env, writing
    the summary, the interpreter's shutdown) would only hide what happened."""

    kept = {'none': 'not written anywhere (--results none)', 'console': 'printed above'}.get(results, f'in {results}')

    def handler(signum: int, frame: Any) -> None:
        print(f'\ninternutopia: stopped by a second Ctrl-C; the records of the episodes that ended before it are {kept}',
              file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(130)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


def run(path: str, steps: int | None = None, env_num: int | None = None, results: str | None = None,
        progress: bool = True, overrides: Sequence[str] = (), record: str | None = None) -> dict[str, Any]:
    """Run ``path`` headless (see the module doc); return the summary. ``overrides``: ``--set``
    values (:mod:`internutopia.cli.overrides`); ``record``: a folder to record the run into as a
    LeRobot dataset (:class:`internutopia.recording.Recorder`).

    Raises:
        ConfigError: the config has problems.
    """
    from internutopia.core.vec_env import Env

    config = load_config(path, env_num, overrides)
    given = results is not None  # (problems with a path the user gave are reported as --results')
    if results is None:
        target = config.metrics_save_path
        if target in ('console', 'none'):
            stem = os.path.splitext(os.path.basename(path))[0]
            results = os.path.join('results', f'{stem}.jsonl')
        else:
            results = target
    if _same_file(results, path):  # (the results writer would empty it before the first step)
        what = f'--results {results}' if given else f'metrics_save_path {results!r}'
        raise ConfigError(path, [f'{path}: {what} is the config file itself, which the results would overwrite; '
                                 "give another file, 'console' or 'none'"])
    config = config.update(metrics_save_path=results, simulator=config.simulator.update(headless=True))
    total = len(config.task_configs)
    endless = [t.type for t in config.task_configs if t.type == 'SingleInferenceTask']
    if endless and steps is None:
        print(f'[internutopia] {len(endless)} episode(s) are {endless[0]}s, which never end by themselves: running until '
              'interrupted (Ctrl-C); pass --steps N to stop after N steps of the env (N x env_num env-steps)', file=sys.stderr, flush=True)
    recorder = _recorder(path, record) if record is not None else None  # ('' is refused, not ignored)
    try:
        env = Env(config)  # starts the results file empty: one run per file
    except ValueError as exc:  # e.g. a results path that cannot be written
        if recorder is not None:
            recorder.close()  # (its folder unclaimed: nothing was recorded)
        message = str(exc)
        if given and message.startswith(f'metrics_save_path {results!r}'):  # the user gave --results, not a field
            message = '--results' + message[len('metrics_save_path'):]
        raise ConfigError(path, [f'{path}: {message}']) from None
    except BaseException:
        if recorder is not None:
            recorder.close()
        raise
    env.runner.results.summary_on_close = False  # this command prints its own summary
    if recorder is not None:
        recorder.attach(env)  # env.close() finishes its saves
    bar = _Progress(total, progress)
    results_writer = env.runner.results
    counts = {'ended': 0, 'finished': 0, **dict.fromkeys(OUTCOMES, 0)}
    env_steps = 0
    taken = 0
    started = time.perf_counter()
    interrupted = False
    replaced: Any = None  # the SIGINT handler stop_at_once replaced (put back once the env is closed)
    try:
        try:
            obs, _ = env.reset()
        except ValueError as exc:  # a check of the first start (a file that does not load, ...): nothing ran
            raise ConfigError(path, [f'{path}: {" ".join(str(exc).split())}']) from None
        counts = episode_counts(results_writer)  # (an episode may fail to load)
        policy = ScriptedPolicy(env)
        policy.start(list(range(env.env_num)))
        started = time.perf_counter()  # env-steps/s counts stepping, not building the world
        while not env.finished and (steps is None or taken < steps):
            active = len(env.active_slots)
            obs, _, terminated, truncated, info = env.step(policy.actions(obs))
            taken += 1
            env_steps += active
            # Episodes that ended on this step, however (slots without a running episode report terminated too).
            ended = [slot for slot in range(env.env_num) if terminated[slot] and info[slot] is not None]
            new = 0
            if ended:
                new_obs, _ = env.reset(ended)
                for slot, slot_obs in zip(ended, new_obs, strict=True):
                    obs[slot] = slot_obs
                policy.start(ended)
                before, counts = counts['finished'], episode_counts(results_writer)  # (after the reset: its load failures too)
                new = counts['finished'] - before
            rate = env_steps / max(time.perf_counter() - started, 1e-9)
            bar.update(counts, new, rate, taken)
    except BrokenPipeError:  # stdout's reader went away (--results console | head): stop, closing the env quietly
        quiet_stdout()
        raise
    except KeyboardInterrupt:
        interrupted = True
        replaced = signal.getsignal(signal.SIGINT)
        stop_at_once(results)
        where = {'none': 'no results file', 'console': 'results printed above'}.get(results, f'results in {results}')
        print(f'\n[internutopia] interrupted: closing the env and writing the summary ({where}); '
              'press Ctrl-C again to stop at once', file=sys.stderr, flush=True)
    finally:
        wall = time.perf_counter() - started
        before, counts = counts['finished'], episode_counts(results_writer)  # (with the records of an interrupted step)
        try:
            bar.update(counts, counts['finished'] - before, env_steps / max(wall, 1e-9), taken, force=True)
            bar.close()
        except BrokenPipeError:  # (stderr's reader went away, as with `2>&1 | head`: the env is closed all the same)
            pass
        metrics_mean = results_writer.summary()['metrics_mean']  # aggregates only: flat memory
        try:
            env.close()  # (a Ctrl-C here is held until the env is closed, then raised)
        except KeyboardInterrupt:  # every record is written: the summary still says what ran
            interrupted = True
        finally:
            # (run() called from Python: the caller's own Ctrl-C handling is back once the run is over)
            if replaced is not None and threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, replaced)
        counts = episode_counts(results_writer)  # (the episodes still running were abandoned by the close)
    summary = {
        'config': path, 'episodes_finished': counts['finished'], 'episodes_total': total,
        'episodes_ended': counts['ended'], **{f'episodes_{kind}': counts[kind] for kind in OUTCOMES},
        'steps': taken, 'env_steps': env_steps, 'wall_s': round(wall, 3),
        'env_steps_per_s': round(env_steps / max(wall, 1e-9), 1),
        'metrics_mean': metrics_mean, 'results': results, 'results_format': config.metrics_save_format,
        'interrupted': interrupted,
    }
    if recorder is not None:
        summary.update(dataset=record, dataset_episodes=recorder.episodes_saved,
                       dataset_left_out=recorder.episodes_dropped + recorder.saves_failed)
    return summary


def _recorder(path: str, root: str) -> Any:
    """The ``--record`` recorder (made before the env: a folder that is taken, not empty, cannot be
    created or not written fails before anything runs)."""
    if not root.strip():  # (an empty shell variable, say: no folder named, and not the current one)
        raise ConfigError(path, [f'--record: expected the folder for the dataset; got {root!r}'])
    try:
        from internutopia.recording import Recorder

        return Recorder(root)
    except (ImportError, OSError) as exc:  # (FileExistsError, NotADirectoryError, PermissionError, ...)
        # (The recorder's hint names its Python argument; the command line has no way to overwrite.)
        message = str(exc).replace('or pass overwrite=True', 'or delete this one first')
        raise ConfigError(path, [f'--record: {message}']) from None


def _same_file(results: str, config_path: str) -> bool:
    """Whether the results path ``results`` names the config file itself."""
    if results in ('console', 'none'):
        return False
    try:
        return os.path.samefile(results, config_path)
    except (OSError, ValueError):  # (no such file yet: not the config)
        return False


def quiet_stdout() -> None:
    """Send what is still written to stdout nowhere: its reader went away (``run ... | head``), and
    each later line (the records of the episodes the env's close abandons, the summary, the
    interpreter's last flush) would raise ``BrokenPipeError`` again, each with its traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):  # (a stdout without a file)
        sys.stdout = open(os.devnull, 'w')  # noqa: SIM115 - stdout for the rest of the process


def episodes_went_wrong(summary: dict[str, Any]) -> int:
    """How many episodes of a run's ``summary`` failed or diverged (``internutopia run`` then exits
    with status 3)."""
    return int(summary.get('episodes_failed', 0)) + int(summary.get('episodes_diverged', 0))


def _print_summary(summary: dict[str, Any]) -> None:
    others = _not_finished({kind: summary.get(f'episodes_{kind}', 0) for kind in OUTCOMES})
    print(f"episodes finished: {summary['episodes_finished']}/{summary['episodes_total']}"
          + (f' ({others})' if others else '') + ('  (interrupted)' if summary['interrupted'] else ''))
    print(f"steps: {summary['steps']}  env-steps: {summary['env_steps']}  wall: {summary['wall_s']:.1f} s  "
          f"({summary['env_steps_per_s']:,.0f} env-steps/s)")
    over = 'finished and diverged episodes' if summary.get('episodes_diverged') else 'finished episodes'
    for name, value in summary['metrics_mean'].items():
        print(f'  {name}: {value:.4g} (mean over {over})')
    if summary.get('results_format') == 'upstream':  # (Config.metrics_save_format)
        lines = "InternUtopia's format: one JSON line of metrics per episode, failed ones left out"
    else:
        lines = 'one JSON line per episode' + ('; the "error" of each failed one says why' if summary.get('episodes_failed') else '')
    if summary['results'] == 'none':
        print('results: no results file written (--results none)')
    elif summary['results'] == 'console':
        print(f'results: printed above ({lines})')
    else:
        print(f"results: {summary['results']} ({lines})")
    if 'dataset' in summary:
        left_out = summary.get('dataset_left_out', 0)
        if not os.path.isfile(os.path.join(summary['dataset'], 'meta', 'info.json')):
            print(f"dataset: none written to {summary['dataset']} (no step was recorded)")
            return
        print(f"dataset: {summary['dataset']} ({summary['dataset_episodes']} episodes recorded"
              + (f'; {left_out} left out: failed, abandoned or without success)' if left_out else ')'))


# ==================================================================================================
# entry point
