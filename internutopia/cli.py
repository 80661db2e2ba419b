"""The ``internutopia`` command: run, validate and benchmark configs.

::

    internutopia run CONFIG.yaml [--steps N] [--env-num N] [--results PATH]
    internutopia validate CONFIG.yaml [CONFIG.yaml ...]
    internutopia bench [ARGS ...]          (the benchmark: internutopia.bench)

``run`` runs a config headless with a progress bar (episodes done / total and env-steps per
second; ``tqdm`` when it is installed, plain text on stderr otherwise). Each robot gets a default
action every step: ``move_to_point`` to the task's ``goal`` when the task has a goal and the robot
has that controller (for a point-nav task, only its navigating robot), otherwise no command
(robots stand or stop). Episode results go to a JSON-lines file, one record per finished episode,
and a summary (episodes, metric means, env-steps/s) is printed at the end.

``validate`` loads a config the way ``run`` does and reports every problem with its place: a file
that is not UTF-8 text, YAML syntax errors with line and column, unknown fields with their path
and the valid fields, bad values, unknown ``type`` names with the registered types, missing scene
or asset files, and scenes that do not load (malformed MJCF or USD).

Relative file paths in a config (``scene_asset_path``, ``usd_path``) are looked up from the current
directory, then from the config file's folder and that folder's parent, so the configs in
``configs/`` run from anywhere in a checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import typing
from collections.abc import Sequence
from typing import Any

import yaml

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class ConfigError(Exception):
    """A config file that cannot be used; ``problems`` lists ``'file:line: message'`` strings."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f'{path}: {len(problems)} problem(s)\n' + '\n'.join(f'  {p}' for p in problems))


# ==================================================================================================
# Loading and validating
def _node_at(root: Any, loc: Sequence[Any]) -> Any:
    """The YAML node at ``loc`` (keys and indices), or the deepest one found on the way."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == str(part):
                    node = key if part == loc[-1] and value is None else value
                    break
            else:
                return node
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node


def _key_node_at(root: Any, loc: Sequence[Any]) -> Any:
    """The mapping *key* node of ``loc[-1]`` under ``loc[:-1]`` (for unknown fields)."""
    parent = _node_at(root, loc[:-1])
    if isinstance(parent, yaml.MappingNode):
        for key, _ in parent.value:
            if key.value == str(loc[-1]):
                return key
    return parent


def _line(node: Any) -> int | None:
    return node.start_mark.line + 1 if node is not None and hasattr(node, 'start_mark') else None


def _path_text(loc: Sequence[Any]) -> str:
    out = ''
    for part in loc:
        out += f'[{part}]' if isinstance(part, int) else (f'.{part}' if out else str(part))
    return out or '(top level)'


def _model_in(annotation: Any) -> Any:
    """The first pydantic model class inside a type annotation (``list[X]``, ``Optional[X]``, ...)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _model_at(data: Any, loc: Sequence[Any]) -> Any:
    """The config class that validates the mapping at ``loc`` (resolving ``type`` fields)."""
    from internutopia.core.config import Config, TypedCfg

    def refine(cls: Any, node: Any) -> Any:
        if cls is not None and issubclass(cls, TypedCfg) and isinstance(node, dict) and isinstance(node.get('type'), str):
            return cls.config_class_for(node['type']) or cls
        return cls

    cls: Any = Config
    node = data
    for part in loc:
        if cls is None:
            return None
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
        else:
            field = cls.model_fields.get(part)
            if field is None:
                return None
            cls = _model_in(field.annotation)
            node = node.get(part) if isinstance(node, dict) else None
        cls = refine(cls, node)
    return cls


#: Where typed entries live in a config, and the registry that knows their types.
def _registries() -> dict[str, Any]:
    from internutopia.core.controller.base import BaseController
    from internutopia.core.metric.base import BaseMetric
    from internutopia.core.object.base import BaseObject
    from internutopia.core.reward.base import BaseReward
    from internutopia.core.robot.base import BaseRobot
    from internutopia.core.sensor.base import BaseSensor
    from internutopia.core.task.base import BaseTask

    return {'task': BaseTask.registry, 'robot': BaseRobot.registry, 'controller': BaseController.registry,
            'sensor': BaseSensor.registry, 'metric': BaseMetric.registry, 'object': BaseObject.registry,
            'reward': BaseReward.registry}


def _typed_entries(data: Any) -> list[tuple[tuple, str, Any]]:
    """``(loc, kind, entry)`` for every typed entry (task, robot, controller, ...) of raw config data."""
    out: list[tuple[tuple, str, Any]] = []

    def controllers(items: Any, loc: tuple) -> None:
        for i, c in enumerate(items if isinstance(items, list) else []):
            out.append((loc + (i,), 'controller', c))
            if isinstance(c, dict):
                controllers(c.get('sub_controllers'), loc + (i, 'sub_controllers'))

    tasks = data.get('task_configs') if isinstance(data, dict) else None
    for t, task in enumerate(tasks if isinstance(tasks, list) else []):
        loc = ('task_configs', t)
        out.append((loc, 'task', task))
        if not isinstance(task, dict):
            continue
        for r, robot in enumerate(task.get('robots') or [] if isinstance(task.get('robots'), list) else []):
            out.append((loc + ('robots', r), 'robot', robot))
            if isinstance(robot, dict):
                controllers(robot.get('controllers'), loc + ('robots', r, 'controllers'))
                for s, sensor in enumerate(robot.get('sensors') or [] if isinstance(robot.get('sensors'), list) else []):
                    out.append((loc + ('robots', r, 'sensors', s), 'sensor', sensor))
        for kind, key in (('metric', 'metrics'), ('object', 'objects')):
            items = task.get(key)
            for i, item in enumerate(items if isinstance(items, list) else []):
                out.append((loc + (key, i), kind, item))
        if isinstance(task.get('reward'), dict):
            out.append((loc + ('reward',), 'reward', task['reward']))
    return out


def load_config(path: str, env_num: int | None = None) -> Any:
    """Load and check a YAML config; return the :class:`~internutopia.core.config.Config`.

    Relative file paths are resolved (see the module doc) in the returned config; the file is not
    changed. ``env_num`` overrides the file's.

    Raises:
        ConfigError: every problem found, each with its line and path in the file.
    """
    from pydantic import ValidationError

    from internutopia.core.config import Config
    from internutopia_extension import import_extensions

    import_extensions()
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read()
    except OSError as exc:
        raise ConfigError(path, [f'{path}: cannot read: {exc.strerror or exc}']) from None
    except UnicodeDecodeError as exc:
        with open(path, 'rb') as stream:
            line = stream.read(exc.start).count(b'\n') + 1
        raise ConfigError(path, [f'{path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); '
                                 'a config is a UTF-8 YAML file']) from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f'{path}:{mark.line + 1}:{mark.column + 1}' if mark is not None else path
        problem = ': '.join(str(p) for p in (getattr(exc, 'context', None), getattr(exc, 'problem', None)) if p) or str(exc)
        context = getattr(exc, 'context_mark', None)
        if context is not None and mark is not None and context.line != mark.line:
            problem += f' (the construct started at line {context.line + 1}, column {context.column + 1})'
        raise ConfigError(path, [f'{where}: YAML syntax error: {problem}']) from None
    if not isinstance(data, dict):
        raise ConfigError(path, [f'{path}:1: expected a mapping of Config fields at the top level '
                                 f'(simulator, env_num, env_offset_size, metrics_save_path, task_configs); '
                                 f'got {type(data).__name__}'])
    problems: list[tuple[int | None, str]] = []
    for loc, kind, entry in _typed_entries(data):
        if not isinstance(entry, dict):
            continue
        type_name = entry.get('type')
        registry = _registries()[kind]
        if isinstance(type_name, str) and type_name not in registry:
            problems.append((_line(_node_at(root, loc + ('type',))),
                             f'{_path_text(loc + ("type",))}: unknown {kind} type {type_name!r}; '
                             f'registered {kind} types: {registry.names()}'))
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        config = None
        for error in exc.errors():
            loc = tuple(error['loc'])
            if error['type'] == 'extra_forbidden':
                model = _model_at(data, loc[:-1])
                valid = sorted(model.model_fields) if model is not None else []
                owner = f' of {model.__name__}' if model is not None else ''
                problems.append((_line(_key_node_at(root, loc)),
                                 f'{_path_text(loc)}: unknown field {loc[-1]!r}{owner}; valid fields: {valid}'))
            elif error['type'] == 'missing':
                problems.append((_line(_node_at(root, loc[:-1])), f'{_path_text(loc)}: missing required field {loc[-1]!r}'))
            else:
                message = error['msg'].removeprefix('Value error, ')
                problems.append((_line(_node_at(root, loc)), f'{_path_text(loc)}: {message} (got {error.get("input")!r})'))
    if config is not None:
        from internutopia.core.config.files import with_resolved_files

        config_dir = os.path.dirname(os.path.abspath(path))
        config, missing = with_resolved_files(config, config_dir)
        for loc, file_path in missing:
            problems.append((_line(_node_at(root, loc)), f'{_path_text(loc)}: file not found: {file_path!r} '
                             f'(looked in {os.getcwd()}, {config_dir} and {os.path.dirname(config_dir)})'))
        if not problems:
            problems.extend(_scene_problems(config, root))
    if problems:
        problems.sort(key=lambda p: p[0] or 0)
        raise ConfigError(path, [f'{path}:{line}: {message}' if line else f'{path}: {message}' for line, message in problems])
    if env_num is not None:
        config = config.update(env_num=env_num)
    return config


def _scene_problems(config: Any, root: Any) -> list[tuple[int | None, str]]:
    """Load and compile every distinct scene of ``config`` (paths already resolved): a malformed
    file (bad XML or USD, an invalid model) is reported at its ``scene_asset_path``."""
    from internutopia.core.scene import scene_spec

    problems: list[tuple[int | None, str]] = []
    seen: set[tuple] = set()
    for t, task in enumerate(config.task_configs):
        key = (task.scene_asset_path, task.scene_scale, task.scene_position, task.scene_orientation)
        if not task.scene_asset_path or key in seen:
            continue
        seen.add(key)
        try:
            scene_spec(task).compile()
        except Exception as exc:  # noqa: BLE001 - MuJoCo and the USD reader raise several types
            loc = ('task_configs', t, 'scene_asset_path')
            reason = ' '.join(str(exc).split())
            problems.append((_line(_node_at(root, loc)), f'{_path_text(loc)}: cannot load scene {task.scene_asset_path!r}: {reason}'))
    return problems


# ==================================================================================================
# run
def default_actions(env: Any) -> list[dict | None]:
    """Per slot, the default action of ``internutopia run`` (``move_to_point`` to the goal, or ``None``)."""
    out: list[dict | None] = []
    for slot, episode in enumerate(env.runner.episodes):
        out.append(_default_action(env, slot, episode.config) if episode is not None else None)
    return out


def _default_action(env: Any, slot: int, task: Any) -> dict | None:
    goal = getattr(task, 'goal', None)
    if goal is None:
        return None
    names = [task.nav_robot_name()] if hasattr(task, 'nav_robot_name') else [r.name for r in task.robots]
    action = {}
    for name in names:
        robot = env.runner.slot_robots[slot].get(name)
        if robot is not None and 'move_to_point' in robot.controllers:
            action[name] = {'move_to_point': [list(goal)]}
    return action or None


class _Progress:
    """Episodes done / total and env-steps/s: tqdm when installed, else text lines on stderr."""

    def __init__(self, total: int | None, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self.bar = None
        self._last = 0.0
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit='ep', desc='episodes', file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                self.bar = None

    def update(self, done: int, new: int, rate: float, steps: int, force: bool = False) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            if new:
                self.bar.update(new)
            now = time.perf_counter()
            if force or now - self._last > 0.5:
                self.bar.set_postfix_str(f'{rate:,.0f} env-steps/s, {steps} steps', refresh=True)
                self._last = now
            return
        now = time.perf_counter()
        if force or now - self._last > 2.0:
            total = '?' if self.total is None else self.total
            print(f'[internutopia] episodes {done}/{total}  {rate:,.0f} env-steps/s  ({steps} steps)', file=sys.stderr, flush=True)
            self._last = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(path: str, steps: int | None = None, env_num: int | None = None, results: str | None = None,
        progress: bool = True) -> dict[str, Any]:
    """Run ``path`` headless (see the module doc); return the summary."""
    from internutopia.core.vec_env import Env

    config = load_config(path, env_num)
    if results is None:
        target = config.metrics_save_path
        if target in ('console', 'none'):
            stem = os.path.splitext(os.path.basename(path))[0]
            results = os.path.join('results', f'{stem}.jsonl')
        else:
            results = target
    config = config.update(metrics_save_path=results, simulator=config.simulator.update(headless=True))
    total = len(config.task_configs)
    endless = [t.type for t in config.task_configs if t.type == 'SingleInferenceTask']
    if endless and steps is None:
        print(f'[internutopia] {len(endless)} episode(s) are {endless[0]}s, which never end by themselves: running until '
              'interrupted (Ctrl-C); pass --steps N to stop after N steps', file=sys.stderr, flush=True)
    try:
        env = Env(config)  # starts the results file empty: one run per file
    except ValueError as exc:  # e.g. a results path that cannot be written
        raise ConfigError(path, [f'{path}: {exc}']) from None
    env.runner.results.summary_on_close = False  # this command prints its own summary
    bar = _Progress(total, progress)
    finished = 0
    env_steps = 0
    taken = 0
    started = time.perf_counter()
    interrupted = False
    try:
        env.reset()
        actions = default_actions(env)
        started = time.perf_counter()  # env-steps/s counts stepping, not building the world
        while not env.finished and (steps is None or taken < steps):
            active = len(env.active_slots)
            _, _, terminated, truncated, info = env.step(actions)
            taken += 1
            env_steps += active
            # Episodes that ended on this step (slots without a running episode report terminated too).
            ended = [slot for slot in range(env.env_num) if terminated[slot] and info[slot] is not None]
            finished += len(ended)
            if ended:
                env.reset(ended)
                for slot in ended:
                    episode = env.runner.episodes[slot]
                    actions[slot] = _default_action(env, slot, episode.config) if episode is not None else None
            rate = env_steps / max(time.perf_counter() - started, 1e-9)
            bar.update(finished, len(ended), rate, taken)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        wall = time.perf_counter() - started
        bar.update(finished, 0, env_steps / max(wall, 1e-9), taken, force=True)
        bar.close()
        metrics_mean = env.runner.results.summary()['metrics_mean']  # aggregates only: flat memory
        env.close()
    summary = {
        'config': path, 'episodes_finished': finished, 'episodes_total': total, 'steps': taken,
        'env_steps': env_steps, 'wall_s': round(wall, 3), 'env_steps_per_s': round(env_steps / max(wall, 1e-9), 1),
        'metrics_mean': metrics_mean, 'results': results, 'interrupted': interrupted,
    }
    return summary


def _print_summary(summary: dict[str, Any]) -> None:
    print(f"episodes finished: {summary['episodes_finished']}/{summary['episodes_total']}"
          + ('  (interrupted)' if summary['interrupted'] else ''))
    print(f"steps: {summary['steps']}  env-steps: {summary['env_steps']}  wall: {summary['wall_s']:.1f} s  "
          f"({summary['env_steps_per_s']:,.0f} env-steps/s)")
    for name, value in summary['metrics_mean'].items():
        print(f'  {name}: {value:.4g} (mean over finished episodes)')
    print(f"results: {summary['results']} (one JSON line per episode)")


# ==================================================================================================
# entry point
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='internutopia', description='Run, validate and benchmark internutopia configs.',
                                     epilog='Run "internutopia COMMAND --help" for the options of a command.')
    from internutopia import __version__

    parser.add_argument('--version', action='version', version=f'internutopia {__version__}')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND')

    run_parser = commands.add_parser(
        'run', help='run a config headless with a progress bar; write episode results as JSON lines',
        description="Run a YAML config headless. Each robot moves to the task's goal with move_to_point when the task "
                    'has a goal and the robot has that controller; otherwise it gets no command. Prints a summary.')
    run_parser.add_argument('config', help='YAML config file')
    run_parser.add_argument('--steps', type=_positive_int, default=None,
                            help='stop after N env steps (default: when every episode has finished)')
    run_parser.add_argument('--env-num', type=_positive_int, default=None, help="env slots (default: the config's env_num)")
    run_parser.add_argument('--results', default=None,
                            help="JSON-lines file for episode results (default: the config's metrics_save_path when it "
                                 'is a file, else results/<config name>.jsonl); overwritten')
    run_parser.add_argument('--no-progress', action='store_true', help='no progress bar')
    run_parser.add_argument('--json', action='store_true', help='print the summary as one JSON line')

    validate_parser = commands.add_parser(
        'validate', help='check config files; report problems with their line numbers',
        description='Check YAML configs: syntax (with line and column), unknown fields (with their path and the valid '
                    'fields), unknown types (with the registered types), missing files. Exit status 1 on any problem.')
    validate_parser.add_argument('configs', nargs='+', metavar='CONFIG', help='YAML config file(s)')

    commands.add_parser('bench', help='run the benchmark (internutopia.bench); "internutopia bench --help" for its options',
                        add_help=False)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a positive integer, got {text!r}') from None
    if value < 1:
        raise argparse.ArgumentTypeError(f'expected a positive integer, got {value}')
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
    """The ``internutopia`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
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
                config = load_config(path)
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
        try:
            summary = run(args.config, steps=args.steps, env_num=args.env_num, results=args.results,
                          progress=not args.no_progress)
        except ConfigError as exc:
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            return EXIT_ERROR
        if args.json:
            print(json.dumps(summary))
        else:
            _print_summary(summary)
        return 130 if summary['interrupted'] else EXIT_OK
    parser.error(f'unknown command {args.command!r}')  # pragma: no cover - argparse rejects it first
    return EXIT_USAGE


if __name__ == '__main__':
    sys.exit(main())
