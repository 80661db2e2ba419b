"""The command line itself: parse ``internutopia COMMAND ...`` and dispatch to ``run``, ``validate``
or ``bench`` (see :mod:`internutopia.cli` for what each command does)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

from internutopia.cli.config_file import ConfigError, load_config
from internutopia.cli.run_command import _print_summary, episodes_went_wrong, quiet_stdout, run

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
#: Exit status of ``run`` when an episode failed (an extension raised, or it failed to load) or
#: diverged; the summary says how many. (Not 1: that is a config refused before anything ran.)
EXIT_EPISODES_FAILED = 3
#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130
#: Exit status when the reader of the output went away (``internutopia run ... | head``): 128 +
#: SIGPIPE, the status of a command that signal ends, as it ends ``cat`` and other tools.
EXIT_BROKEN_PIPE = 141


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='internutopia', description='Run, validate, view and benchmark internutopia configs.',
                                     epilog='Run "internutopia COMMAND --help" for the options of a command.')
    from internutopia import __version__

    parser.add_argument('--version', action='version', version=f'internutopia {__version__}')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND')

    run_parser = commands.add_parser(
        'run', help='run a config headless with a progress bar; write episode results as JSON lines',
        description="Run a YAML config headless with a scripted policy per task: robots drive to the task's goal with "
                    'move_to_point when it has one; an arm with IK and gripper controllers picks the task\'s target object '
                    'and places it at its goal_position; other robots get no command. Prints a summary. Ctrl-C ends the '
                    'run after the current step (the summary is still printed); a second Ctrl-C stops at once. Exit '
                    'status: 0 when every episode ran to its end, 1 when the config is refused, 3 when an episode '
                    'failed or diverged, 130 after Ctrl-C.')
    run_parser.add_argument('config', help='YAML config file')
    run_parser.add_argument('--steps', type=_positive_int, default=None,
                            help='stop after N steps of the env, each stepping every slot once (so at most N x env_num '
                                 'env-steps; default: when every episode has finished)')
    run_parser.add_argument('--env-num', type=_positive_int, default=None, help="env slots (default: the config's env_num)")
    run_parser.add_argument('--results', default=None,
                            help="JSON-lines file for episode results (default: the config's metrics_save_path when it "
                                 'is a file, else results/<config name>.jsonl); overwritten. "console": print them; '
                                 '"none": write none')
    _add_set(run_parser)
    run_parser.add_argument('--record', default=None, metavar='DIR',
                            help='record every finished episode into a LeRobot dataset at DIR (a new folder; '
                                 "needs the 'dataset' extra; docs/datasets.md)")
    run_parser.add_argument('--no-progress', action='store_true', help='no progress bar')
    run_parser.add_argument('--json', action='store_true', help='print the summary as one JSON line')

    validate_parser = commands.add_parser(
        'validate', help='check config files; report problems with their line numbers',
        description='Check YAML configs: syntax (with line and column), unknown fields (with their path and the valid '
                    'fields), unknown types (with the registered types), missing files. Exit status 1 on any problem.')
    validate_parser.add_argument('configs', nargs='+', metavar='CONFIG', help='YAML config file(s)')
    _add_set(validate_parser)

    view_parser = commands.add_parser(
        'view', help='run a config and watch it live in a web browser (needs the viewer extra)',
        description='Run a YAML config in real time, each slot driven as "run" drives it, and serve a live 3D view at '
                    'http://HOST:PORT for any browser (a headless server included: forward the port). The page shows '
                    'every slot on its grid cell, can follow one slot, and shows the camera images of its robots. '
                    'Needs the viewer extra: pip install "internutopia[viewer]".')
    view_parser.add_argument('config', help='YAML config file')
    view_parser.add_argument('--port', type=_port, default=8080,
                             help='port of the page, 0-65535 (default 8080; the next free one when taken; 0: any free '
                                  'one, printed with the URL)')
    view_parser.add_argument('--host', default='0.0.0.0',
                             help="address to listen on, one of this machine's (default 0.0.0.0: every interface; "
                                  '127.0.0.1: this machine only)')
    view_parser.add_argument('--speed', type=_speed, default=1.0,
                             help='simulated seconds per wall-clock second, >= 0 (default 1: real time; 0: as fast as '
                                  'it runs)')
    view_parser.add_argument('--steps', type=_positive_int, default=None,
                             help='stop after N steps of the env, each stepping every slot once (default: Ctrl-C)')
    _add_set(view_parser)

    commands.add_parser('bench', help='run the benchmark (internutopia.bench); "internutopia bench --help" for its options',
                        add_help=False)
    return parser


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', dest='overrides',
                        help='change a value of the config before it is checked: KEY is a dotted path into the YAML '
                             '(list entries by index), VALUE is read as YAML; repeat for several, e.g. --set env_num=4 '
                             '--set task_configs.0.max_steps=100')


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a positive integer, got {text!r}') from None
    if value < 1:
        raise argparse.ArgumentTypeError(f'expected a positive integer, got {value}')
    return value


def _in_range(kind: type, low: float, high: float, expected: str) -> Any:
    """An argparse type: ``text`` as ``kind`` within ``[low, high]`` (NaN never is), else an error saying ``expected``."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected {expected}, got {text!r}') from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f'expected {expected}, got {text}')
        return value
    return parse


_port = _in_range(int, 0, 65535, 'a port 0-65535 (0: any free port)')
_speed = _in_range(float, 0.0, 1.7976931348623157e308, 'a finite number >= 0 (0: as fast as it runs)')


def _json_safe(value: Any) -> Any:
    """``value`` with every float that is not finite as ``None``: JSON has no ``Infinity`` or ``NaN``
    (a metric's mean is infinite when an episode reported ``inf``, as a time-to-goal metric may)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return value


def _bench(argv: list[str]) -> int:
    try:
        from internutopia.bench import main as bench_main
    except ImportError as exc:
        if getattr(exc, 'name', '') not in ('internutopia.bench',):
            raise
        print('internutopia bench: the benchmark (internutopia.bench) is not part of this installation', file=sys.stderr)
        return EXIT_USAGE
    result = bench_main(argv)
    return int(result) if isinstance(result, int) else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """The ``internutopia`` console script; returns the exit status (130 after Ctrl-C; for ``run``, 3
    when an episode failed or diverged)."""
    try:
        status = _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print('\ninternutopia: interrupted (Ctrl-C)', file=sys.stderr)
        status = EXIT_INTERRUPTED
    except BrokenPipeError:  # the output's reader went away: stop without a traceback, as other tools do
        quiet_stdout()
        status = EXIT_BROKEN_PIPE
    if status == EXIT_INTERRUPTED and argv is None:
        # The console script after Ctrl-C: everything is closed and written, so end here rather
        # than in the interpreter's shutdown, where a second Ctrl-C would land on default handlers.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


def _main(argv: list[str]) -> int:
    if argv and argv[0] == 'bench':
        return _bench(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command == 'validate':
        status = EXIT_OK
        for path in args.configs:
            try:
                config = load_config(path, overrides=args.overrides)
            except ConfigError as exc:
                for problem in exc.problems:
                    print(problem, file=sys.stderr)
                status = EXIT_ERROR
                continue
            robots = sorted({r.type for t in config.task_configs for r in t.robots})
            tasks = sorted({t.type for t in config.task_configs})
            print(f'{path}: OK ({len(config.task_configs)} episode(s) of {", ".join(tasks)}; robots {", ".join(robots) or "none"}; '
                  f'env_num {config.env_num})')
        return status
    if args.command == 'run':
        # --json: stdout holds the summary's JSON line alone, so a JSON reader can take it; what
        # the run prints there (the records of --results console) goes to stderr.
        to_stderr = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
        try:
            with to_stderr:
                summary = run(args.config, steps=args.steps, env_num=args.env_num, results=args.results,
                              progress=not args.no_progress, overrides=args.overrides, record=args.record)
        except ConfigError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            return EXIT_ERROR
        if args.json:
            print(json.dumps(_json_safe(summary), allow_nan=False))
        else:
            _print_summary(summary)
        if summary['interrupted']:
            return EXIT_INTERRUPTED
        wrong = episodes_went_wrong(summary)
        if wrong:
            kinds = ' or '.join(kind for kind in ('failed', 'diverged') if summary.get(f'episodes_{kind}'))
            print(f"internutopia run: {wrong} of {summary['episodes_total']} episode(s) {kinds} (exit status "
                  f'{EXIT_EPISODES_FAILED})', file=sys.stderr)
            return EXIT_EPISODES_FAILED
        return EXIT_OK
    if args.command == 'view':
        try:
            from internutopia.cli.view_command import need_viewer, view
            from internutopia.viewer.server import ViewerStartError

            need_viewer()  # (before the config is loaded and the env built)
        except ImportError as exc:
            print(f'internutopia view: {exc}', file=sys.stderr)
            return EXIT_USAGE
        try:
            view(args.config, port=args.port, host=args.host, overrides=args.overrides, speed=args.speed, steps=args.steps,
                 log=lambda text: print(text, file=sys.stderr, flush=True))
        except ConfigError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            return EXIT_ERROR
        except ViewerStartError as exc:
            print(f'internutopia view: {exc}', file=sys.stderr)
            return EXIT_ERROR
        return EXIT_OK
    parser.error(f'unknown command {args.command!r}')  # pragma: no cover - argparse rejects it first
    return EXIT_USAGE


__all__ = ['EXIT_BROKEN_PIPE', 'EXIT_EPISODES_FAILED', 'EXIT_ERROR', 'EXIT_INTERRUPTED', 'EXIT_OK', 'EXIT_USAGE', 'main']
