"""The docs: their Python examples run as written, their sample outputs and figures match a run,
and the site builds with ``mkdocs build --strict``."""

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
    # the configs a newcomer starts from are in the reference too
    for name in ('internutopia_extension.configs.robots.h1.H1RobotCfg', 'internutopia_extension.configs.tasks',
                 'ManipulationTaskCfg', 'FrankaRobotCfg', 'ScriptedPickPlace', 'attach_viewer'):
        assert name in api, name


def page(name: str) -> str:
    with open(os.path.join(DOCS, name), encoding='utf-8') as stream:
        return stream.read()


@pytest.mark.slow
def test_cli_sample_output_is_a_run(tmp_path, capsys):
    """The summary cli.md shows for the point-nav config is what a run prints (all but the speed)."""
    from internutopia import cli

    sample = re.search(r'\$ internutopia run configs/jetbot_point_nav.yaml\n(.*?)```', page('cli.md'), flags=re.S).group(1)
    assert cli.main(['run', os.path.join(ROOT, 'configs', 'jetbot_point_nav.yaml'), '--no-progress',
                     '--results', str(tmp_path / 'r.jsonl')]) == 0
    printed = capsys.readouterr().out.splitlines()
    documented = sample.splitlines()
    assert printed[0] == documented[1]  # episodes finished
    steps = re.compile(r'^steps: (\d+)  env-steps: (\d+)')
    assert steps.match(printed[1]).groups() == steps.match(documented[2]).groups()
    metrics = [line for line in printed if line.startswith('  ')]
    assert metrics == [line for line in documented if line.startswith('  ')]


def test_performance_page_shows_the_committed_run():
    """The table of docs/performance.md's first run ("A first run") is the benchmark's own Markdown
    of the JSON it ships (docs/assets/bench_default.json), and the plots it shows are drawn from
    that JSON."""
    from internutopia.bench.plots import load_figures
    from internutopia.bench.report import markdown_table

    figures = load_figures(os.path.join(DOCS, 'assets', 'bench_default.json'))
    text = page('performance.md')
    assert markdown_table(figures['rows']) in text
    for robot in {row['robot'] for row in figures['rows']}:
        for kind in ('speed', 'memory'):
            assert f'assets/bench_{robot}_{kind}.png' in text
            assert os.path.exists(os.path.join(DOCS, 'assets', f'bench_{robot}_{kind}.png'))


def test_plots_are_drawn_from_a_run(tmp_path):
    pytest.importorskip('matplotlib')
    from internutopia.bench.plots import main as plots

    written = plots([os.path.join(DOCS, 'assets', 'bench_default.json'), '--out', str(tmp_path)])
    assert sorted(os.path.basename(path) for path in written) == ['bench_h1_memory.png', 'bench_h1_speed.png']
    assert all(os.path.getsize(path) > 10_000 for path in written)
