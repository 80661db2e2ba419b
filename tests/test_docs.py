"""The docs: their Python examples run as written, and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, 'docs')
#: Pages whose ```python blocks are executed, in order, in one namespace per page.
RUNNABLE = ['index.md', 'getting-started.md', 'extensions.md', 'gymnasium.md', 'reliability.md']


def python_blocks(page: str) -> list[str]:
    with open(os.path.join(DOCS, page), encoding='utf-8') as stream:
        text = stream.read()
    return re.findall(r'^```python\n(.*?)^```', text, flags=re.S | re.M)


@pytest.mark.parametrize('page', RUNNABLE)
def test_page_examples_run(page, tmp_path, monkeypatch):
    blocks = python_blocks(page)
    assert blocks, f'{page} has no python examples'
    monkeypatch.chdir(tmp_path)
    namespace: dict = {'__name__': f'docs_{page.replace("-", "_").replace(".", "_")}'}
    for number, block in enumerate(blocks):
        code = compile(block, f'docs/{page} (python block {number + 1})', 'exec')
        exec(code, namespace)  # noqa: S102 - the docs' own examples


def test_extension_example_registers_its_types():
    from internutopia.core.controller.base import BaseController
    from internutopia.core.robot.base import BaseRobot
    from internutopia.core.sensor.base import BaseSensor
    from internutopia.core.task.base import BaseTask

    namespace: dict = {'__name__': 'docs_extensions_check'}
    exec(compile(python_blocks('extensions.md')[0], 'docs/extensions.md', 'exec'), namespace)  # noqa: S102
    assert 'PuckRobot' in BaseRobot.registry and 'PuckVelocityController' in BaseController.registry
    assert 'Velocimeter' in BaseSensor.registry and 'CrossLineTask' in BaseTask.registry


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip('mkdocs')
    pytest.importorskip('mkdocstrings')
    mkdocs = shutil.which('mkdocs', path=os.path.dirname(sys.executable)) or shutil.which('mkdocs')
    command = [mkdocs] if mkdocs else [sys.executable, '-m', 'mkdocs']
    result = subprocess.run([*command, 'build', '--strict', '--site-dir', str(tmp_path / 'site')], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert (tmp_path / 'site' / 'api' / 'index.html').exists()
    api = (tmp_path / 'site' / 'api' / 'index.html').read_text(encoding='utf-8')
    assert 'internutopia.core.gym_vector.VectorEnv' in api and 'internutopia.core.vec_env.Env' in api
