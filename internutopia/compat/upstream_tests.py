"""Run InternUtopia's own test scripts (``tests/*.py`` of a checkout) against this package.

Upstream runs each script as ``python tests/X.py`` from the repository root and expects exit code
0. This tool does the same from a scratch copy of the checkout's ``tests/`` folder, with this
package on ``sys.path`` instead of the checkout's own ``internutopia``, and applies only the
allowed edits listed in :data:`ALLOWED_EDITS` (Isaac Sim imports replaced by our equivalents)::

    python -m internutopia.compat.upstream_tests /path/to/InternUtopia            # every script
    python -m internutopia.compat.upstream_tests /path/to/InternUtopia -k h1_loco  # a subset
    python -m internutopia.compat.upstream_tests /path/to/InternUtopia.git         # a bare clone (HEAD's tests/)

Scripts whose robot has no model here (an ``internutopia_extension.configs.robots.X`` module that
does not exist) are reported as ``absent`` and not run. The exit code is 0 when every script that
ran passed.

``--e2e`` runs upstream's CI wrapper instead, ``tests/e2e_test.py`` (pytest, one test per script
or per folder of robot scripts, each starting ``python ./tests/X.py``), from the same edited
scratch copy, with ``python`` meaning this interpreter and without upstream's ``conftest.py``
(it reports results to upstream's database)::

    python -m internutopia.compat.upstream_tests /path/to/InternUtopia --e2e
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

#: ``(pattern, replacement, why)``: the only edits made to upstream's scripts before they run.
ALLOWED_EDITS: tuple[tuple[str, str, str], ...] = (
    (r'\bfrom omni\.isaac\.core\.utils\.rotations import\b', 'from internutopia.core.util.rotations import',
     "Isaac Sim's rotation helpers (quat_to_euler_angles, euler_angles_to_quat) -> internutopia.core.util.rotations"),
    (r'\bfrom isaacsim\.core\.utils\.rotations import\b', 'from internutopia.core.util.rotations import',
     "Isaac Sim 4.5's name of the same module -> internutopia.core.util.rotations"),
)

#: Files in ``tests/`` that are not scripts: pytest plumbing and modules other scripts import.
NOT_SCRIPTS = {'conftest.py', 'e2e_test.py', 'multi_sim_task.py'}

_ROBOT_IMPORT = re.compile(r'internutopia_extension\.configs\.robots\.(\w+)')


@dataclasses.dataclass
class Outcome:
    """What running one upstream script gave."""

    script: str
    status: str  # 'pass', 'fail', 'timeout' or 'absent'
    seconds: float = 0.0
    detail: str = ''


def discover(checkout: Path) -> list[str]:
    """Upstream's test scripts, as paths relative to the checkout (the files its CI runs).

    Top-level ``tests/*.py`` except :data:`NOT_SCRIPTS`; in sub-folders every ``*.py`` except the
    ``test_*.py`` helper modules (upstream's CI filters those out with ``grep -v test_``).
    """
    tests = checkout / 'tests'
    if not tests.is_dir():
        raise ValueError(f'{checkout} has no tests/ folder; pass the root of an InternUtopia checkout')
    scripts = []
    for path in sorted(tests.rglob('*.py')):
        rel = path.relative_to(checkout).as_posix()
        if path.parent == tests:
            if path.name not in NOT_SCRIPTS:
                scripts.append(rel)
        elif not path.name.startswith('test_') and path.name != '__init__.py':
            scripts.append(rel)
    return scripts


def is_bare_repository(path: Path) -> bool:
    """Whether ``path`` is a git directory without a work tree (``git clone --bare``, a mirror)."""
    return not (path / 'tests').is_dir() and (path / 'HEAD').is_file() and (path / 'objects').is_dir()


@contextlib.contextmanager
def checkout_of(path: Path, revision: str = 'HEAD') -> Iterator[Path]:
    """``path`` itself when it is a checkout; for a bare repository, a scratch folder holding
    ``revision``'s ``tests/`` (``git archive``), removed afterwards."""
    if not is_bare_repository(path):
        yield path
        return
    git = shutil.which('git')
    if git is None:
        raise ValueError(f'{path} is a bare git repository and reading it needs git, which is not on PATH')
    with tempfile.TemporaryDirectory(prefix='internutopia-upstream-checkout-') as scratch:
        archive = subprocess.run([git, '--git-dir', str(path), 'archive', '--format=tar', revision, 'tests'],
                                 capture_output=True)
        if archive.returncode != 0:
            raise ValueError(f'cannot read tests/ at {revision} of {path}: {archive.stderr.decode(errors="replace").strip()}')
        subprocess.run(['tar', '-x', '-C', scratch], input=archive.stdout, check=True)
        yield Path(scratch)


def apply_allowed_edits(source: str) -> tuple[str, list[str]]:
    """``source`` with :data:`ALLOWED_EDITS` applied, and the reasons of the edits made."""
    made = []
    for pattern, replacement, why in ALLOWED_EDITS:
        source, count = re.subn(pattern, replacement, source)
        if count:
            made.append(why)
    return source, made


def missing_robots(source: str) -> list[str]:
    """Robot config modules a script imports that this package does not have."""
    missing = []
    for name in sorted(set(_ROBOT_IMPORT.findall(source))):
        if importlib.util.find_spec(f'internutopia_extension.configs.robots.{name}') is None:
            missing.append(name)
    return missing


def _package_root() -> str:
    import internutopia

    return str(Path(internutopia.__file__).resolve().parent.parent)


def run_scripts(checkout: Path, scripts: Iterable[str], timeout: float = 900.0, verbose: bool = False) -> list[Outcome]:
    """Run ``scripts`` (paths relative to ``checkout``) one by one; see the module docstring."""
    outcomes = []
    with edited_copy(checkout) as (root, env):
        for script in scripts:
            source = (root / script).read_text(encoding='utf-8')
            absent = missing_robots(source)
            if absent:
                outcomes.append(Outcome(script, 'absent', detail=f'no robot model here: {", ".join(absent)}'))
                _report(outcomes[-1])
                continue
            start = time.perf_counter()
            try:
                done = subprocess.run([sys.executable, script], cwd=root, env=env, capture_output=True, text=True,
                                      timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                lines = _text(exc.stdout or b'').strip().splitlines()
                outcomes.append(Outcome(script, 'timeout', time.perf_counter() - start,
                                        f'no exit within {timeout:.0f} s; last output line: {lines[-1][:200] if lines else "(none)"}'))
                _report(outcomes[-1])
                continue
            seconds = time.perf_counter() - start
            output = done.stdout + done.stderr
            if verbose:
                print(output)
            if done.returncode == 0:
                outcomes.append(Outcome(script, 'pass', seconds))
            else:
                outcomes.append(Outcome(script, 'fail', seconds, f'exit {done.returncode}: {_last_error(output)}'))
            _report(outcomes[-1])
    return outcomes


@contextlib.contextmanager
def edited_copy(checkout: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A scratch folder holding ``checkout``'s ``tests/`` with :data:`ALLOWED_EDITS` applied, and
    the environment its scripts run in (this package first on ``PYTHONPATH``); removed afterwards."""
    with tempfile.TemporaryDirectory(prefix='internutopia-upstream-') as scratch:
        root = Path(scratch)
        shutil.copytree(checkout / 'tests', root / 'tests')
        for path in (root / 'tests').rglob('*.py'):
            edited, _ = apply_allowed_edits(path.read_text(encoding='utf-8'))
            path.write_text(edited, encoding='utf-8')
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join([_package_root(), *filter(None, [env.get('PYTHONPATH')])])
        from internutopia.core.backend.mujoco.render.gl import default_to_egl

        default_to_egl(env, headless_only=False)
        env['PYTHONUNBUFFERED'] = '1'
        yield root, env


def run_e2e(checkout: Path, timeout: float = 3600.0, patterns: Iterable[str] = ()) -> int:
    """Run upstream's ``tests/e2e_test.py`` against this package; its pytest exit code.

    ``patterns`` pick tests by name (pytest's ``-k``, joined with ``or``). A ``python`` wrapper
    first on ``PATH`` runs this interpreter, so the ``python ./tests/X.py`` commands the file
    starts use this package (a wrapper script, not a link: a link outside a virtual environment's
    ``bin`` would lose the environment).
    """
    if not (checkout / 'tests' / 'e2e_test.py').is_file():
        raise ValueError(f'{checkout} has no tests/e2e_test.py (InternUtopia 2.x has one)')
    with edited_copy(checkout) as (root, env):
        bin_dir = root / 'bin'
        bin_dir.mkdir()
        wrapper = bin_dir / 'python'
        wrapper.write_text(f'#!/bin/sh\nexec {sys.executable!s} "$@"\n', encoding='utf-8')
        wrapper.chmod(0o755)
        env['PATH'] = os.pathsep.join([str(bin_dir), env.get('PATH', '')])
        env.setdefault('JOB_ID', 'local')  # its teardown names results by the CI job
        command = [sys.executable, '-m', 'pytest', '--noconftest', '-p', 'no:cacheprovider', '-q', '-W',
                   'ignore::pytest.PytestUnknownMarkWarning', 'tests/e2e_test.py']
        patterns = list(patterns)
        if patterns:
            command += ['-k', ' or '.join(patterns)]
        # Its own session, so that a timeout ends the scripts its shells started too.
        process = subprocess.Popen(command, cwd=root, env=env, start_new_session=True)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            print(f'e2e_test.py did not finish within {timeout:.0f} s; its processes were killed', flush=True)
            return 1


def _text(value: bytes | str) -> str:
    return value.decode(errors='replace') if isinstance(value, bytes) else value


def _last_error(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r'^\w*(Error|Exception)\b', line) or line.startswith('exception is'):
            return line.strip()[:300]
    return (lines[-1].strip() if lines else '(no output)')[:300]


def _report(outcome: Outcome) -> None:
    seconds = f'{outcome.seconds:6.1f} s' if outcome.status != 'absent' else '        '
    print(f'{outcome.status:8s} {seconds}  {outcome.script}  {outcome.detail}', flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog='python -m internutopia.compat.upstream_tests', description=__doc__.splitlines()[0])
    parser.add_argument('checkout', type=Path,
                        help='root of an InternUtopia 2.x checkout (the folder holding tests/), or a bare clone of it')
    parser.add_argument('--revision', default='HEAD', help='for a bare clone: the commit whose tests/ run (default HEAD)')
    parser.add_argument('-k', dest='patterns', action='append', default=[], help='run only scripts whose path contains this text (repeatable)')
    parser.add_argument('--timeout', type=float, default=None,
                        help='seconds allowed per script (default 900); with --e2e, for the whole file (default 3600)')
    parser.add_argument('--e2e', action='store_true',
                        help="run upstream's CI wrapper tests/e2e_test.py (pytest, --noconftest) instead; -k picks its tests by name")
    parser.add_argument('--list', action='store_true', help='list the scripts and the edits, run nothing')
    parser.add_argument('-v', '--verbose', action='store_true', help="print every script's output")
    args = parser.parse_args(argv)
    try:
        with checkout_of(args.checkout, args.revision) as checkout:
            return _run(parser, args, checkout)
    except ValueError as exc:
        parser.error(str(exc))


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, checkout: Path) -> int:
    if args.e2e:
        return run_e2e(checkout, args.timeout or 3600.0, args.patterns)
    scripts = discover(checkout)
    if args.patterns:
        scripts = [s for s in scripts if any(p in s for p in args.patterns)]
    if args.list:
        for script in scripts:
            _, edits = apply_allowed_edits((checkout / script).read_text(encoding='utf-8'))
            print(script + (f'   (edits: {"; ".join(edits)})' if edits else ''))
        return 0
    outcomes = run_scripts(checkout, scripts, timeout=args.timeout or 900.0, verbose=args.verbose)
    counts = {status: sum(o.status == status for o in outcomes) for status in ('pass', 'fail', 'timeout', 'absent')}
    ran = len(outcomes) - counts['absent']
    print(f'\n{counts["pass"]} of {ran} scripts passed ({len(outcomes)} found; {counts["absent"]} need a robot this '
          f'package does not have; {counts["fail"]} failed; {counts["timeout"]} timed out)')
    return 0 if counts['pass'] == ran else 1


if __name__ == '__main__':
    sys.exit(main())
