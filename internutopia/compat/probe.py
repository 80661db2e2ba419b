"""Name-by-name probe of InternUtopia 2.2.1's public surface against this package.

The list of upstream names (:data:`UPSTREAM_NAMES_FILE`, one ``kind dotted.path`` a line) is what
a script, a YAML config or an extension package written for InternUtopia touches: every module and
name its tests, demos and extensions import, every ready-made config and config field, the public
members of ``vec_env.Env`` and ``gym_env.Env``, and the methods of the base classes extensions
subclass. It is extracted from an upstream checkout by :func:`extract` (names only) and checked
here by :func:`probe`; ``docs/contract.md`` has the same list with what each name is here::

    python -m internutopia.compat.probe                       # present / absent, by name
    python -m internutopia.compat.probe --extract CHECKOUT    # rebuild the list from a checkout
    python -m internutopia.compat.probe --markdown            # the table for docs/contract.md
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from internutopia.compat.notes import ABSENT, status_of
from internutopia.per_slot.registration import per_slot_face

UPSTREAM_NAMES_FILE = Path(__file__).with_name('upstream_names.txt')

#: Upstream modules whose classes extensions subclass or scripts call: their public members count.
_MEMBER_SOURCES: dict[str, tuple[str, ...]] = {
    'internutopia/core/vec_env.py': ('Env',),
    'internutopia/core/gym_env.py': ('Env',),
    'internutopia/core/runner.py': ('SimulatorRunner',),
    'internutopia/core/robot/robot.py': ('BaseRobot',),
    'internutopia/core/robot/controller.py': ('BaseController',),
    'internutopia/core/robot/articulation.py': ('IArticulation',),
    'internutopia/core/robot/articulation_action.py': ('ArticulationAction',),
    'internutopia/core/robot/articulation_subset.py': ('ArticulationSubset',),
    'internutopia/core/robot/rigid_body.py': ('IRigidBody',),
    'internutopia/core/sensor/sensor.py': ('BaseSensor',),
    'internutopia/core/sensor/camera.py': ('ICamera',),
    'internutopia/core/task/task.py': ('BaseTask',),
    'internutopia/core/task/metric.py': ('BaseMetric',),
    'internutopia/core/task/reward.py': ('BaseReward',),
    'internutopia/core/object/object.py': ('BaseObject',),
    'internutopia/core/scene/scene.py': ('IScene',),
    'internutopia/core/task_config_manager/base.py': ('BaseTaskConfigManager',),
}
#: Private members extensions written upstream's way call anyway.
_PRIVATE_USED = {'_make_ordered'}
#: Folders whose imports count: what scripts (tests, demos) and extension packages use.
_SCRIPT_DIRS = ('tests', 'internutopia/demo')
_EXTENSION_DIR = 'internutopia_extension'
_CONFIG_DIRS = ('internutopia/core/config', 'internutopia_extension/configs')
#: Folders of upstream's built-in classes: every module in them and every public class it defines
#: count (extensions import them by these paths, e.g. ``internutopia_extension.robots.franka.Franka``).
_BUILT_IN_DIRS = tuple(f'internutopia_extension/{kind}' for kind in ('controllers', 'tasks', 'metrics', 'robots', 'objects', 'sensors'))


@dataclasses.dataclass(frozen=True, order=True)
class UpstreamName:
    """One public name of InternUtopia: ``kind`` is module, name, field or member."""

    path: str
    kind: str


def _module_of(checkout: Path, file: Path) -> str:
    rel = file.relative_to(checkout).with_suffix('')
    parts = list(rel.parts)
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return '.'.join(parts)


def _is_module(checkout: Path, dotted: str) -> bool:
    base = checkout.joinpath(*dotted.split('.'))
    return base.with_suffix('.py').is_file() or (base / '__init__.py').is_file()


def _is_config_class(node: ast.ClassDef) -> bool:
    names = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else '' for b in node.bases]
    return any(n.endswith('Cfg') or n.endswith('Config') or n in ('BaseModel', 'BaseCfg') for n in names)


def extract(checkout: Path, member_sources: dict[str, tuple[str, ...]] | None = None) -> list[UpstreamName]:
    """The public names of an InternUtopia checkout that scripts, configs and extensions touch.

    ``member_sources`` (default :data:`_MEMBER_SOURCES`) maps files to the classes whose members count.
    """
    checkout = Path(checkout)
    member_sources = _MEMBER_SOURCES if member_sources is None else member_sources
    found: set[UpstreamName] = set()

    def add_import(module: str, names: Iterable[str]) -> None:
        if not _is_module(checkout, module):
            return  # a name upstream itself no longer has (dead import)
        found.add(UpstreamName(module, 'module'))
        for name in names:
            if name == '*':
                continue
            sub = f'{module}.{name}'
            found.add(UpstreamName(sub, 'module' if _is_module(checkout, sub) else 'name'))

    def imports(file: Path, core_only: bool) -> None:
        tree = ast.parse(file.read_text(encoding='utf-8'))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                root = node.module.split('.')[0]
                if root == 'internutopia' or (root == 'internutopia_extension' and not core_only):
                    add_import(node.module, [a.name for a in node.names])
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    root = alias.name.split('.')[0]
                    if root == 'internutopia' or (root == 'internutopia_extension' and not core_only):
                        add_import(alias.name, [])

    for folder in _SCRIPT_DIRS:
        for file in sorted((checkout / folder).rglob('*.py')) if (checkout / folder).is_dir() else ():
            imports(file, core_only=False)
    for file in sorted((checkout / _EXTENSION_DIR).rglob('*.py')) if (checkout / _EXTENSION_DIR).is_dir() else ():
        imports(file, core_only=True)

    for folder in _CONFIG_DIRS:
        for file in sorted((checkout / folder).rglob('*.py')) if (checkout / folder).is_dir() else ():
            module = _module_of(checkout, file)
            found.add(UpstreamName(module, 'module'))
            for node in ast.parse(file.read_text(encoding='utf-8')).body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith('_'):
                    found.add(UpstreamName(f'{module}.{node.name}', 'name'))
                    if _is_config_class(node):
                        for item in node.body:
                            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                                found.add(UpstreamName(f'{module}.{node.name}.{item.target.id}', 'field'))
                elif isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name) and not target.id.startswith('_'):
                            found.add(UpstreamName(f'{module}.{target.id}', 'name'))

    for folder in _BUILT_IN_DIRS:
        for file in sorted((checkout / folder).glob('*.py')) if (checkout / folder).is_dir() else ():
            module = _module_of(checkout, file)
            found.add(UpstreamName(module, 'module'))
            for node in ast.parse(file.read_text(encoding='utf-8')).body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith('_'):
                    found.add(UpstreamName(f'{module}.{node.name}', 'name'))

    for rel, classes in member_sources.items():
        file = checkout / rel
        if not file.is_file():
            continue
        module = _module_of(checkout, file)
        found.add(UpstreamName(module, 'module'))
        for node in ast.parse(file.read_text(encoding='utf-8')).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith('_'):
                found.add(UpstreamName(f'{module}.{node.name}', 'name'))
            if not (isinstance(node, ast.ClassDef) and node.name in classes):
                continue
            found.add(UpstreamName(f'{module}.{node.name}', 'name'))
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    if not item.name.startswith('_') or item.name in _PRIVATE_USED:
                        found.add(UpstreamName(f'{module}.{node.name}.{item.name}', 'member'))
                    if item.name == '__init__':
                        for sub in ast.walk(item):
                            if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
                                    and isinstance(sub.value, ast.Name) and sub.value.id == 'self'
                                    and not sub.attr.startswith('_')):
                                found.add(UpstreamName(f'{module}.{node.name}.{sub.attr}', 'member'))
                elif isinstance(item, ast.Assign):
                    for target in item.targets:
                        if isinstance(target, ast.Name) and not target.id.startswith('_'):
                            found.add(UpstreamName(f'{module}.{node.name}.{target.id}', 'member'))
    return sorted(found)


def load_names(path: Path = UPSTREAM_NAMES_FILE) -> list[UpstreamName]:
    """The stored list of upstream names."""
    out = []
    for line in path.read_text(encoding='utf-8').splitlines():
        line = line.strip()
        if line and not line.startswith('#'):
            kind, dotted = line.split()
            out.append(UpstreamName(dotted, kind))
    return out


def save_names(names: Iterable[UpstreamName], path: Path = UPSTREAM_NAMES_FILE) -> None:
    """Write the list of upstream names (sorted, one ``kind path`` a line)."""
    lines = ['# Public names of InternUtopia 2.2.1 that scripts, configs and extensions touch.',
             '# Rebuilt by `python -m internutopia.compat.probe --extract CHECKOUT`; checked by the probe.']
    lines += [f'{n.kind} {n.path}' for n in sorted(set(names))]
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')


_MISSING = object()


def resolve(path: str) -> Any:
    """The object ``path`` names here (a module, attribute or config field), or ``_MISSING``."""
    parts = path.split('.')
    obj: Any = _MISSING
    index = len(parts)
    while index > 0:
        try:
            obj = importlib.import_module('.'.join(parts[:index]))
            break
        except ModuleNotFoundError as exc:
            if exc.name is not None and not '.'.join(parts[:index]).startswith(exc.name):
                raise  # a module exists but one of its own imports is missing: a real error
            index -= 1
    if obj is _MISSING:
        return _MISSING
    for part in parts[index:]:
        fields = getattr(obj, 'model_fields', None)
        if isinstance(obj, type) and isinstance(fields, dict) and part in fields:
            obj = fields[part]
            continue
        try:
            obj = getattr(obj, part)
        except AttributeError:
            value = _instance_member(obj, part)
            face = per_slot_face(obj) if value is _MISSING and isinstance(obj, type) else None
            if face is not None:  # a member of InternUtopia's per-slot API, which subclasses written its way get
                value = getattr(face, part, _MISSING)
                if value is _MISSING:
                    value = _instance_member(face, part)
            if value is _MISSING:
                return _MISSING
            obj = value
    return obj


def _instance_member(cls: Any, name: str) -> Any:
    """Members set per instance (in ``__init__``) are declared in ``__annotations__`` or ``__slots__``."""
    if not isinstance(cls, type):
        return _MISSING
    for klass in cls.__mro__:
        if name in getattr(klass, '__annotations__', {}) or name in getattr(klass, '__slots__', ()):
            return name
    return _MISSING


@dataclasses.dataclass
class ProbeResult:
    """Outcome of :func:`probe`."""

    present: list[UpstreamName]
    absent: list[UpstreamName]
    absent_undocumented: list[UpstreamName]
    documented_absent_but_present: list[UpstreamName]


def probe(names: list[UpstreamName] | None = None) -> ProbeResult:
    """Check every upstream name against this package (imports each module once)."""
    names = load_names() if names is None else names
    present: list[UpstreamName] = []
    absent: list[UpstreamName] = []
    undocumented: list[UpstreamName] = []
    stale: list[UpstreamName] = []
    for name in names:
        exists = resolve(name.path) is not _MISSING
        status, _ = status_of(name.path)
        (present if exists else absent).append(name)
        if not exists and status != ABSENT:
            undocumented.append(name)
        if exists and status == ABSENT:
            stale.append(name)
    return ProbeResult(present, absent, undocumented, stale)


def markdown_table(names: list[UpstreamName] | None = None) -> str:
    """The contract table: one row per upstream name with its status here and how or why."""
    names = load_names() if names is None else names
    rows = ['| upstream name | kind | here | how / why |', '|---|---|---|---|']
    for name in names:
        status, note = status_of(name.path)
        rows.append(f'| `{name.path}` | {name.kind} | {status} | {note} |')
    return '\n'.join(rows)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; exit code 1 when a name is absent without a documented reason."""
    parser = argparse.ArgumentParser(prog='python -m internutopia.compat.probe', description=__doc__.splitlines()[0])
    parser.add_argument('--extract', type=Path, metavar='CHECKOUT', help='rebuild the name list from an InternUtopia checkout')
    parser.add_argument('--markdown', action='store_true', help='print the contract table')
    parser.add_argument('-v', '--verbose', action='store_true', help='list every absent name')
    args = parser.parse_args(argv)
    if args.extract:
        names = extract(args.extract)
        save_names(names)
        print(f'{len(names)} upstream names written to {UPSTREAM_NAMES_FILE}')
        return 0
    if args.markdown:
        print(markdown_table())
        return 0
    result = probe()
    total = len(result.present) + len(result.absent)
    print(f'{len(result.present)} of {total} upstream names present; {len(result.absent)} absent '
          f'({len(result.absent) - len(result.absent_undocumented)} with a documented reason)')
    shown = result.absent if args.verbose else result.absent_undocumented
    for name in shown:
        print(f'  absent: {name.kind:6s} {name.path}   {status_of(name.path)[1]}')
    for name in result.documented_absent_but_present:
        print(f'  documented as absent but present: {name.path}')
    return 0 if not result.absent_undocumented and not result.documented_absent_but_present else 1


if __name__ == '__main__':
    sys.exit(main())
