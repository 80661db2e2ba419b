"""The backend boundary is real: the core's robots, controllers, sensors, tasks, metrics, rewards,
runner and view, the per-slot layer, and the extension's controllers, tasks, metrics and rewards
reach the physics only through :mod:`internutopia.core.backend.interface` (``docs/backend.md``),
so a second backend needs no change to them.

Checked on the source (``ast``), lazy imports and ``TYPE_CHECKING`` blocks included: no module of
the guarded packages imports an engine (``mujoco``, ``mujoco_warp``, ``warp``) or the MuJoCo
backend's own modules, nor reaches a pack's engine objects (``pack.model``, ``pack.mjdata``,
``pack.batch``).
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Packages that must work unchanged on any backend.
GUARDED = ['internutopia_extension/controllers', 'internutopia_extension/tasks', 'internutopia_extension/metrics',
           'internutopia_extension/rewards',
           'internutopia/core/robot', 'internutopia/core/controller', 'internutopia/core/sensor', 'internutopia/core/task',
           'internutopia/core/metric', 'internutopia/core/reward', 'internutopia/core/runner', 'internutopia/core/view.py',
           'internutopia/per_slot']
#: Where models are built (MuJoCo specs: the builder interface, ``ModelSpec``) and cameras render: the
#: built-in robots, objects and sensors. Reported, not checked: what a second backend would touch there.
REPORTED = ['internutopia_extension/robots', 'internutopia_extension/objects', 'internutopia_extension/sensors']
#: Top-level modules of physics engines.
ENGINES = {'mujoco', 'mujoco_warp', 'warp'}
#: Modules of one backend in particular (backend-neutral code imports ``internutopia.core.backend`` and
#: its ``interface``, ``model``, ``state`` and ``parts`` modules only).
BACKEND_PRIVATE = ('internutopia.core.backend.mujoco', 'internutopia.core.backend.warp')
#: Attributes of a pack that are its engine's own objects.
ENGINE_OBJECTS = {'model', 'mjdata', 'batch'}
#: Names a pack goes by in this code (``world`` in ``bind``, ``group.world``, ``pack``).
PACK_NAMES = {'world', 'pack'}


def python_files(paths: list[str]) -> list[str]:
    found = []
    for path in paths:
        full = os.path.join(ROOT, path)
        if full.endswith('.py'):
            found.append(full)
            continue
        for folder, _, files in os.walk(full):
            found += [os.path.join(folder, name) for name in sorted(files) if name.endswith('.py')]
    return sorted(found)


def engine_uses(path: str) -> list[str]:
    """``'line: what'`` for each engine import, backend-private import or engine object reached in ``path``."""
    with open(path, encoding='utf-8') as stream:
        tree = ast.parse(stream.read(), path)
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module] + [f'{node.module}.{alias.name}' for alias in node.names]
        flagged = [name for name in names if name.split('.')[0] in ENGINES or name.startswith(BACKEND_PRIVATE)]
        if flagged:  # one entry per statement: `from a.mujoco import b` names a.mujoco, not a.mujoco.b too
            found.append(f'{node.lineno}: import {flagged[0]}')
        if isinstance(node, ast.Attribute) and node.attr in ENGINE_OBJECTS:
            owner = node.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else None
            if owner_name in PACK_NAMES:
                found.append(f'{node.lineno}: {owner_name}.{node.attr}')
    return sorted(set(found), key=lambda text: (int(text.split(':')[0]), text))


@pytest.mark.parametrize('path', python_files(GUARDED), ids=lambda p: os.path.relpath(p, ROOT))
def test_guarded_modules_use_only_the_backend_interface(path):
    uses = engine_uses(path)
    assert not uses, (f'{os.path.relpath(path, ROOT)} reaches the physics engine directly: {uses}; use the pack\'s '
                      'data (StateArrays), lookup (ModelLookup) and methods (internutopia.core.backend.interface)')


def test_the_check_finds_engine_uses(tmp_path):
    source = tmp_path / 'sample.py'
    source.write_text('import numpy\n'
                      'def f(world, group):\n'
                      '    import mujoco.batch\n'
                      '    from internutopia.core.backend.mujoco.world import CONTACT_SLOTS\n'
                      '    return world.model, group.world.mjdata(0), world.data.qpos, world.lookup.timestep\n')
    source.write_text(source.read_text() + '    from internutopia.core.backend import mujoco as engine, interface\n')
    assert engine_uses(str(source)) == ['3: import mujoco.batch', '4: import internutopia.core.backend.mujoco.world',
                                        '5: world.mjdata', '5: world.model', '6: import internutopia.core.backend.mujoco']


def reported_modules_using_the_engine() -> dict[str, list[str]]:
    """Modules of :data:`REPORTED` that reach the engine directly, with what they use."""
    out = {}
    for path in python_files(REPORTED):
        uses = engine_uses(path)
        if uses:
            out[os.path.relpath(path, ROOT)] = uses
    return out


def test_report_model_builders_using_the_engine(capsys):
    # A report, not a check: building MuJoCo specs is these modules' job; what else they reach is
    # listed with INTERNUTOPIA_BOUNDARY_REPORT=1 (not by default: it would sit among the progress dots).
    remaining = reported_modules_using_the_engine()
    assert all(path.startswith('internutopia_extension/') for path in remaining)
    if not os.environ.get('INTERNUTOPIA_BOUNDARY_REPORT'):
        return
    with capsys.disabled():
        print(f'\n[backend boundary] model builders and cameras reaching the engine directly: {len(remaining)}')
        for path, uses in remaining.items():
            print(f'  {path}: {", ".join(uses)}')
