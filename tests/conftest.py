"""Shared fixtures: configs built on the jetbot (fast) and the H1."""

from __future__ import annotations

import os
import signal

os.environ.setdefault('MUJOCO_GL', 'egl')

# The Ctrl-C tests send SIGINT as a terminal does. A shell without job control starts background
# commands (`cmd &`) with SIGINT ignored, and Python then installs no KeyboardInterrupt handler
# (nor do the CLI processes the tests start, which inherit the ignore): give the workers, and so
# their children, the disposition a terminal's process has.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import pytest  # noqa: E402


def _compile_the_packages_once() -> None:
    """Byte-compile this repository's packages before the workers start.

    The suite starts a few hundred fresh interpreters (benchmark children, Ray workers, CLI runs),
    each importing both packages. Where the environment sets ``PYTHONDONTWRITEBYTECODE`` (as
    container images often do), no interpreter saves what it compiled, so each would compile all
    ~400 modules again: about 0.5 s a process. ``compileall`` writes the cached bytecode Python
    reads on import either way (an up-to-date file is skipped: ~0.1 s when nothing changed).
    """
    import compileall

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in ('internutopia', 'internutopia_extension', 'examples'):
        compileall.compile_dir(os.path.join(root, folder), quiet=2)


if not os.environ.get('PYTEST_XDIST_WORKER'):  # the controller (or a serial run): once per run
    _compile_the_packages_once()

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402

import_extensions()

# Property-based tests (tests/test_properties.py): CI runs a fixed, bounded set of examples;
# HYPOTHESIS_PROFILE=dev explores many more.
from hypothesis import settings  # noqa: E402

settings.register_profile('ci', max_examples=40, derandomize=True, deadline=None, print_blob=True)
settings.register_profile('dev', max_examples=1000, deadline=None)
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'ci'))


# ---------------------------------------------------------------------------------------------
# Parallel runs (pytest-xdist, README's test command runs ``python -m pytest -n 2 -m "not slow"``; see
# docs/reliability.md, "Running the tests"). A worker is handed a whole file at a time, so a
# module-scoped fixture (a recorded dataset, a compiled Warp model, a loaded robot) is built once,
# not once per worker; tests marked ``pytest.mark.xdist_group(NAME)`` all go to one worker and run
# one after another there, whatever their file: 'ray' (each starts a local Ray cluster of its own
# with worker processes, and several fault tests wait out timeouts that a second cluster's load
# would stretch) and 'browser' (headless Chromium, software-rendered and slow; a screenshot shares
# the default browser profile).


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n N`` alone distributes with the groups above (``--dist loadgroup``), never with xdist's
    default ``load``, which ignores them and would start two Ray clusters side by side."""
    if getattr(config.option, 'numprocesses', None) and getattr(config.option, 'dist', 'no') == 'no':
        config.option.dist = 'loadgroup'


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup`` with a file, rather than a single test, as the unit of an ungrouped test;
    the units go out in the order the workers collected them (see the reordering below)."""
    if config.getoption('dist') != 'loadgroup':
        return None
    from xdist.scheduler import LoadGroupScheduling

    class FileOrGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            group = super()._split_scope(nodeid)
            return group if group != nodeid else nodeid.split('::', 1)[0]

    config.option.loadscopereorder = False
    return FileOrGroupScheduling(config, log)


def _unit(item: pytest.Item) -> str:
    """The unit a worker is handed ``item`` in: its xdist group, else its file."""
    group = item.get_closest_marker('xdist_group')
    return f'@{group.args[0]}' if group and group.args else item.nodeid.split('::', 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the units that take longest first (more slow-marked tests, then more
    tests), so that no long unit starts last while the other worker idles; tests keep their
    order inside a unit. A serial run keeps the collection order."""
    if not os.environ.get('PYTEST_XDIST_WORKER'):
        return
    slow: dict[str, int] = {}
    count: dict[str, int] = {}
    for item in items:
        unit = _unit(item)
        slow[unit] = slow.get(unit, 0) + (item.get_closest_marker('slow') is not None)
        count[unit] = count.get(unit, 0) + 1
    items.sort(key=lambda item: (-slow[_unit(item)], -count[_unit(item)], _unit(item)))


@pytest.fixture
def make_config():
    """Build a Config of ``tasks`` with ``env_num`` slots, results discarded."""

    def make(tasks, env_num=2, offset=5.0, **kw):
        kw.setdefault('metrics_save_path', 'none')
        return Config(simulator=SimConfig(physics_dt=1 / 240), env_num=env_num, env_offset_size=offset,
                      task_configs=list(tasks), **kw)

    return make


def _env_classes() -> list[type]:
    from internutopia.core import gym_env, vec_env
    from internutopia.core.gym_vector import FlatEnv, VectorEnv

    return [vec_env.Env, gym_env.Env, VectorEnv, FlatEnv]


@pytest.fixture(scope='class')
def local_ray():
    """One local Ray for a class of tests, started here (the envs join it and leave it running
    on close) and shut down after the class."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def close_every_env_the_test_opens(monkeypatch):
    """Every env a test builds (``vec_env.Env``, a Ray ``DistributedEnv``, ``gym_env.Env``,
    ``VectorEnv``, ``FlatEnv``) is closed when the test ends, passed or failed: a failed assert
    leaks no world, render thread or Ray actor into the tests after it. (Closing is idempotent, so
    tests that close their envs themselves, or use ``with``, are unaffected.)"""
    opened: list = []
    for cls in _env_classes():
        original = cls.__init__

        def init(self, *args, _original=original, **kwargs):
            opened.append(self)
            _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, '__init__', init)
    yield
    for env in reversed(opened):
        try:
            env.close()
        except Exception:  # noqa: BLE001 - half-built by a failing constructor, or already torn down
            pass
