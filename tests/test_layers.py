"""Layers only look down: every import in the packages, lazy ones included, is checked against one table.

config -> backend -> robots/controllers/sensors/objects -> tasks/metrics/rewards/view -> runner
-> per-slot layer (InternUtopia's one-object-per-slot style, with the modules at InternUtopia's
paths that re-export it) -> env -> adapters (gym, Ray, episode tools) -> applications (CLI,
benchmark, the package itself).
``internutopia_extension`` sits above the extension API (layers up to tasks and the view) and is
never imported by ``internutopia.core``: the core finds it through ``internutopia.core.plugins``.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ('internutopia', 'internutopia_extension')

#: Modules at InternUtopia's paths that only re-export the per-slot layer (nothing in the packages imports them).
UPSTREAM_PER_SLOT_PATHS = (
    'internutopia.core.robot.articulation', 'internutopia.core.robot.articulation_action',
    'internutopia.core.robot.articulation_subset', 'internutopia.core.robot.rigid_body', 'internutopia.core.robot.robot',
    'internutopia.core.robot.controller', 'internutopia.core.sensor.sensor', 'internutopia.core.sensor.camera',
    'internutopia.core.task.task', 'internutopia.core.task.metric', 'internutopia.core.task.reward',
    'internutopia.core.scene.scene',
)
CONFIG, BACKEND, ENTITIES, TASKS, RUNNER, PER_SLOT, ENV, ADAPTERS, APPS = range(9)
LAYER_NAMES = ['config', 'backend', 'entities', 'tasks', 'runner', 'per-slot layer', 'env', 'adapters', 'applications']
#: Module prefix -> layer; the longest matching prefix wins. Every module must match one.
LAYERS = {
    'internutopia.macros': CONFIG,
    'internutopia.core': CONFIG,  # the package docstring only
    'internutopia.core.config': CONFIG,
    'internutopia.core.registry': CONFIG,
    'internutopia.core.plugins': CONFIG,
    'internutopia.core.grid': CONFIG,
    'internutopia.core.util': CONFIG,
    'internutopia.core.datahub': CONFIG,  # a process-local store with no dependencies
    'internutopia.core.backend': BACKEND,
    'internutopia.core.scene': BACKEND,
    'internutopia.core.entity': ENTITIES,  # the base of robots and objects
    'internutopia.core.robot': ENTITIES,
    'internutopia.core.robot.isaacsim': ENTITIES,  # InternUtopia's Isaac-only classes: importable, they raise when built
    'internutopia.core.controller': ENTITIES,
    'internutopia.core.sensor': ENTITIES,
    'internutopia.core.object': ENTITIES,
    'internutopia.core.view': TASKS,
    'internutopia.core.task': TASKS,
    'internutopia.core.metric': TASKS,
    'internutopia.core.reward': TASKS,
    'internutopia.core.runner': RUNNER,
    'internutopia.core.episode_queue': RUNNER,
    'internutopia.core.results': RUNNER,
    'internutopia.per_slot': PER_SLOT,
    # InternUtopia's module paths of per-slot classes and factories: re-exports of the per-slot layer.
    **dict.fromkeys(UPSTREAM_PER_SLOT_PATHS, PER_SLOT),
    'internutopia.core.vec_env': ENV,
    # The env's parts in modules of their own (vec_env re-exports their public names).
    'internutopia.core.simulation_app': ENV,
    'internutopia.core.env_checks': ENV,
    'internutopia.core.env_results': ENV,
    'internutopia.core.env_upstream': ENV,
    'internutopia.core.env_views': ENV,
    'internutopia.core.task_config_manager': ENV,  # InternUtopia's view of the env's episode queue
    'internutopia.core.gym_env': ADAPTERS,
    'internutopia.core.gym_vector': ADAPTERS,
    'internutopia.core.distribution': ADAPTERS,
    'internutopia.core.episodes': ADAPTERS,
    'internutopia': APPS,  # the package __init__: wires the extensions in
    'internutopia.cli': APPS,
    'internutopia.bench': APPS,
    'internutopia.viewer': APPS,
    'internutopia.limit': APPS,
    'internutopia.envs': APPS,
}
EXTENSION = 'internutopia_extension'
#: Applications inside the extension: the scripts that trained (and measure) a policy shipped beside
#: them (the project's rule: a policy lives next to the script that made it). They run envs, so they
#: sit at the applications layer; nothing in the packages may import them.
EXTENSION_APPLICATIONS = (
    'internutopia_extension.robots.h1_locomotion.policy.train',
    'internutopia_extension.robots.h1_locomotion.policy.evaluate',
    'internutopia_extension.robots.h1_with_hand_measure',  # measures walking with and without hands
)
#: The highest layer of ``internutopia`` an extension may import: the extension API.
EXTENSION_SEES = TASKS


def module_name(path: str) -> str:
    parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def modules() -> dict[str, str]:
    found = {}
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith('.py'):
                    path = os.path.join(folder, name)
                    found[module_name(path)] = path
    return found


def layer_of(module: str) -> int | None:
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + '.')) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


@dataclass(frozen=True)
class Import:
    target: str
    line: int


def imports_of(module: str, path: str) -> list[Import]:
    """Every module ``path`` imports, wherever the statement is (functions, TYPE_CHECKING blocks),
    and string literals given to ``importlib.import_module``."""
    with open(path, encoding='utf-8') as stream:
        tree = ast.parse(stream.read(), path)
    package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(anchor + ([base] if base else []))
            found.append(Import(base, node.lineno))
            # `from internutopia.core import vec_env` imports the submodule
            found += [Import(f'{base}.{alias.name}', node.lineno) for alias in node.names if f'{base}.{alias.name}' in ALL]
        elif (isinstance(node, ast.Call) and getattr(node.func, 'attr', getattr(node.func, 'id', None)) in ('import_module', '__import__')
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append(Import(node.args[0].value, node.lineno))
    return [i for i in found if i.target.split('.')[0] in PACKAGES]


ALL = modules()


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in ALL if not m.startswith(EXTENSION) and layer_of(m) is None)
    assert not unplaced, f'place these modules in tests/test_layers.py LAYERS: {unplaced}'


def violations() -> list[str]:
    found = []
    for module, path in sorted(ALL.items()):
        for imp in imports_of(module, path):
            target_is_extension = imp.target.split('.')[0] == EXTENSION
            where = f'{os.path.relpath(path, ROOT)}:{imp.line} imports {imp.target}'
            if imp.target in EXTENSION_APPLICATIONS:
                found.append(f'{where}: an application (a policy\'s training script) is imported')
                continue
            if module.startswith(EXTENSION):
                if module in EXTENSION_APPLICATIONS:
                    continue
                if not target_is_extension:
                    layer = layer_of(imp.target)
                    if layer is not None and layer > EXTENSION_SEES:
                        found.append(f'{where}: an extension sees layers up to {LAYER_NAMES[EXTENSION_SEES]}, '
                                     f'not {LAYER_NAMES[layer]}')
                continue
            layer = layer_of(module)
            if target_is_extension:
                if layer < APPS:
                    found.append(f'{where}: {LAYER_NAMES[layer]} is below internutopia_extension '
                                 '(load it through internutopia.core.plugins)')
                continue
            target = layer_of(imp.target)
            if target is not None and target > layer:
                found.append(f'{where}: {LAYER_NAMES[layer]} -> {LAYER_NAMES[target]}')
    return found


def test_layers_only_look_down():
    problems = violations()
    assert not problems, 'imports that look up a layer:\n' + '\n'.join(problems)


@pytest.mark.parametrize('source, target, expected', [
    ('internutopia.core.config', 'internutopia.core.vec_env', 'config -> env'),
    ('internutopia.core.task.base', 'internutopia.core.runner', 'tasks -> runner'),
    ('internutopia.core.vec_env', 'internutopia.core.distribution.env', 'env -> adapters'),
    ('internutopia.core.runner.runner', 'internutopia_extension', 'below internutopia_extension'),
    ('internutopia_extension.tasks.x', 'internutopia.core.runner', 'extension sees layers up to tasks'),
])
def test_the_check_catches_an_upward_import_even_inside_a_function(tmp_path, monkeypatch, source, target, expected):
    path = tmp_path / 'module.py'
    path.write_text(f'def later():\n    import {target}\n')
    monkeypatch.setitem(ALL, source, str(path))
    assert any(expected in problem and target in problem for problem in violations())


def test_core_imports_without_the_extension_package():
    """Importing every core module loads no ``internutopia_extension`` module (checked in a fresh process)."""
    import subprocess
    import sys

    core = sorted(m for m in ALL if m.startswith('internutopia.core') and layer_of(m) <= ENV)
    script = ('import sys, importlib\n'
              f'for name in {core!r}:\n'
              '    importlib.import_module(name)\n'
              "print(sorted(m for m in sys.modules if m.startswith('internutopia_extension')))\n")
    out = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == '[]'


def _package_of(module: str) -> str:
    """``internutopia.core.X`` for a module of ``internutopia.core`` (its first-level package or module)."""
    return '.'.join(module.split('.')[:3])


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def import_graph(prefix: str, package_level: bool) -> dict[str, set[str]]:
    """Who imports whom among the modules under ``prefix`` (lazy and TYPE_CHECKING imports included),
    by module or by first-level package of ``internutopia.core``."""
    def node(module: str) -> str | None:
        if not (module == prefix or module.startswith(prefix + '.')):
            return None
        if package_level:
            return _package_of(module)
        return module if module in ALL else module.rpartition('.')[0] if module.rpartition('.')[0] in ALL else None

    edges: dict[str, set[str]] = {}
    for module, path in ALL.items():
        source = node(module)
        if source is None:
            continue
        for imp in imports_of(module, path):
            target = node(imp.target)
            if target is not None and target != source:
                edges.setdefault(source, set()).add(target)
    return edges


def test_no_import_cycles_between_the_packages_of_the_core():
    assert _cycles(import_graph('internutopia.core', package_level=True)) == []


@pytest.mark.parametrize('prefix', ['internutopia.core', 'internutopia.per_slot'])
def test_no_import_cycles_between_modules(prefix):
    assert _cycles(import_graph(prefix, package_level=False)) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]


def test_the_vectorized_core_never_imports_the_per_slot_layer():
    """Only the modules kept at InternUtopia's paths (re-exports, listed in UPSTREAM_PER_SLOT_PATHS)
    and the env above the layer import it."""
    importers = sorted({module for module, path in ALL.items() if module.startswith('internutopia.core')
                        for imp in imports_of(module, path) if imp.target.startswith('internutopia.per_slot')})
    assert [m for m in importers if layer_of(m) < PER_SLOT] == []
    assert set(importers) - set(UPSTREAM_PER_SLOT_PATHS) == {'internutopia.core.vec_env'}


def test_nothing_in_the_packages_imports_the_modules_at_internutopias_paths():
    """The re-exports at InternUtopia's paths sit in ``internutopia.core`` for users' imports only:
    were a module of the packages to import one, the vectorized core's folders would depend on
    the per-slot layer above them (farm-studio draws these re-exports as arrows core -> per_slot).
    The one exception is the benchmark's per-slot case, written on purpose as a user writes one."""
    written_as_users_write = {'internutopia.bench.per_slot'}
    importers = sorted((module, imp.target) for module, path in ALL.items() for imp in imports_of(module, path)
                       if imp.target in UPSTREAM_PER_SLOT_PATHS and module not in UPSTREAM_PER_SLOT_PATHS)
    assert [(module, target) for module, target in importers if module not in written_as_users_write] == []
    assert {module for module, _ in importers} == written_as_users_write  # (else the exception is stale)
