"""What a user installing the wheel (not an editable checkout) gets: the data files the code reads at run time."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_holds_the_data_files_the_code_reads(tmp_path):
    # (built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds)
    source = tmp_path / 'source'
    source.mkdir()
    for name in ('pyproject.toml', 'README.md'):
        shutil.copy2(ROOT / name, source / name)
    for package in ('internutopia', 'internutopia_extension'):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns('__pycache__'))
    subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-q', '-w', str(tmp_path), str(source)],
                   check=True, cwd=tmp_path, timeout=300)
    (wheel,) = tmp_path.glob('internutopia-*.whl')
    names = set(zipfile.ZipFile(wheel).namelist())
    # Read by internutopia.compat.probe through Path(__file__).with_name(...).
    assert 'internutopia/compat/upstream_names.txt' in names
    assert 'internutopia/py.typed' in names
    assert any(n.startswith('internutopia_extension/') and n.endswith('.onnx') for n in names)
    # Tests and examples are not shipped as packages.
    assert not any(n.startswith(('tests/', 'examples/')) for n in names)


def test_version_is_the_installed_distributions():
    import importlib.metadata

    import internutopia

    assert internutopia.__version__ == importlib.metadata.version('internutopia')
    done = subprocess.run([sys.executable, '-m', 'internutopia', '--version'], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == f'internutopia {internutopia.__version__}', done.stdout + done.stderr
