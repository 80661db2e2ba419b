"""The checks the benchmark's command lines share: lists, counts and times, each error naming its option.

Every tool of :mod:`internutopia.bench` reads comma-separated lists (cases, slot counts, ids) and
counts; a bad one is an ``argparse`` error (exit status 2) that names the option and what it takes,
given before anything is built or started. A list that is empty (``--env-nums ''``) or names an
entry twice is refused too: the first measures nothing, the second the same row twice.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog='tool')
>>> int_list(parser, '--env-nums', '1,4')
[1, 4]
>>> checked_list(parser, '--api', ['dict'], choices=('dict', 'array'))
['dict']
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

__all__ = ['APIS', 'add_api_option', 'add_case_options', 'at_least', 'checked_apis', 'checked_cases', 'checked_list', 'int_list', 'interrupted', 'json_line',
           'positive_seconds', 'text_list']


def _error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    parser.error(message)
    raise AssertionError('unreachable')  # (parser.error exits)


def checked_list(parser: argparse.ArgumentParser, option: str, values: Sequence[Any], *,
                 choices: Iterable[Any] | None = None, what: str = 'entry', allow_empty: bool = False) -> list[Any]:
    """``values`` (an option's parsed list) as a list, after checking it: not empty (unless
    ``allow_empty``), no entry twice, each one of ``choices`` when given (the error lists them)."""
    values = list(values)
    if not values and not allow_empty:
        listed = f': {", ".join(map(str, choices))}' if choices is not None else ''
        _error(parser, f'{option} is empty; give at least one {what}{listed}')
    if choices is not None:
        valid = list(choices)
        for value in values:
            if value not in valid:
                _error(parser, f'unknown {what} {value!r} in {option}; choose from {", ".join(map(str, valid))}')
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            _error(parser, f'{option} names {value!r} twice')
        seen.add(value)
    return values


def text_list(text: str) -> list[str]:
    """``'a,b'`` as ``['a', 'b']`` (empty parts left out)."""
    return [part for part in text.split(',') if part]


def int_list(parser: argparse.ArgumentParser, option: str, text: str, minimum: int = 1) -> list[int]:
    """``text`` (``'1,4,16'``) as distinct ints of at least ``minimum``; else an error naming ``option``."""
    try:
        values = [int(part) for part in text_list(text)]
    except ValueError:
        _error(parser, f'{option} takes comma-separated whole numbers (e.g. 1,4,16); got {text!r}')
    for value in values:
        if value < minimum:
            _error(parser, f'{option} takes numbers of at least {minimum}; got {value}')
    return checked_list(parser, option, values, what='number')


def add_case_options(parser: argparse.ArgumentParser, robots: str, env_nums: str) -> None:
    """``--robots`` (cases of :data:`~internutopia.bench.cases.CASES`) and ``--env-nums`` (slot
    counts), with these defaults; read them back with :func:`checked_cases`."""
    parser.add_argument('--robots', default=robots, help=f'comma-separated cases of internutopia.bench.cases (default: {robots})')
    parser.add_argument('--env-nums', default=env_nums, help=f'comma-separated slot counts (default: {env_nums})')


def checked_cases(parser: argparse.ArgumentParser, args: argparse.Namespace, cases: Iterable[str]) -> tuple[list[str], list[int]]:
    """The ``--robots`` and ``--env-nums`` of :func:`add_case_options`, checked: each robot one of
    ``cases`` (the error lists them), the slot counts distinct whole numbers of at least 1.

    >>> parser = argparse.ArgumentParser(prog='tool')
    >>> add_case_options(parser, 'h1', '1,64')
    >>> checked_cases(parser, parser.parse_args([]), ['h1', 'jetbot'])
    (['h1'], [1, 64])
    """
    robots = checked_list(parser, '--robots', text_list(args.robots), choices=cases, what='robot')
    return robots, int_list(parser, '--env-nums', args.env_nums)


#: The env APIs a benchmark times: ``env.step`` with a dict per slot, ``env.step_arrays`` with batched arrays.
APIS = ('dict', 'array')


def add_api_option(parser: argparse.ArgumentParser, default: str) -> None:
    """``--api``: which of :data:`APIS` to time, comma-separated; read it back with :func:`checked_apis`."""
    parser.add_argument('--api', default=default, help=f'comma-separated: dict (env.step), array (env.step_arrays) (default: {default})')


def checked_apis(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The ``--api`` of :func:`add_api_option`, checked (each one of :data:`APIS`, none twice)."""
    return checked_list(parser, '--api', text_list(args.api), choices=APIS, what='API')


def at_least(parser: argparse.ArgumentParser, option: str, value: int, minimum: int = 1) -> int:
    """``value`` when it is at least ``minimum``; else an error naming ``option``."""
    if value < minimum:
        _error(parser, f'{option} must be at least {minimum}; got {value}')
    return value


def positive_seconds(parser: argparse.ArgumentParser, option: str, value: float) -> float:
    """``value`` when it is a number of seconds above 0 (``inf``: no limit); ``nan``, which no time
    ever passes, is refused."""
    if not value > 0:  # (nan too)
        _error(parser, f'{option} must be a positive number of seconds (inf: no limit); got {value}')
    return value


def json_line(figures: Any) -> str:
    """``figures`` as one line of strict JSON: a figure that is not a number (``nan``: a part that did
    not run; ``inf``) becomes ``null``, which every JSON reader takes (``NaN`` is not JSON)."""
    return json.dumps(_finite(figures), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def interrupted(prog: str, body: Callable[[], Any]) -> Any:
    """``body()``; on Ctrl-C, every process the tool started is ended (:mod:`~internutopia.bench.processes`)
    and one line says so on stderr instead of a traceback: exit status 130, as the shell gives."""
    from internutopia.bench import processes

    try:
        return body()
    except KeyboardInterrupt:
        processes.kill_tracked()
        print(f'{prog}: interrupted; every process it had started was ended', file=sys.stderr)
        raise SystemExit(130) from None
