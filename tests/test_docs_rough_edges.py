"""What a newcomer walking through the docs trips on: every shipped config listed in Getting
started, broken links to a page's heading caught by the docs build, and the example that needs
Pillow saying which extra brings it."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_getting_started_lists_every_shipped_config():
    with open(os.path.join(ROOT, 'docs', 'getting-started.md'), encoding='utf-8') as stream:
        page = stream.read()
    shipped = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, 'configs', '*.yaml')))
    missing = [path for path in shipped if f'`{path}`' not in page]
    assert not missing, f'docs/getting-started.md\'s config table lacks {missing}'


def test_the_docs_build_fails_on_a_link_to_a_heading_that_does_not_exist(tmp_path):
    """mkdocs checks that linked pages exist but, by default, not their anchors: a link to
    ``performance.md#results`` (a heading that was renamed) passed ``mkdocs build --strict``.
    The project's mkdocs.yml turns anchor checking on; a small site with its settings shows it."""
    pytest.importorskip('mkdocs')
    with open(os.path.join(ROOT, 'mkdocs.yml'), encoding='utf-8') as stream:
        settings = yaml.safe_load(stream)
    assert settings['strict'] is True
    docs = tmp_path / 'docs'
    docs.mkdir()
    (docs / 'index.md').write_text('# Home\n\nSee [the results](other.md#results).\n')
    (docs / 'other.md').write_text('# Other\n\n## The complete table\n\nrows\n')
    site = {'site_name': 'anchors', 'docs_dir': str(docs), 'site_dir': str(tmp_path / 'site'), 'strict': True,
            'validation': settings.get('validation', {}), 'markdown_extensions': [{'toc': {'permalink': True}}]}
    (tmp_path / 'mkdocs.yml').write_text(yaml.safe_dump(site))
    mkdocs = shutil.which('mkdocs', path=os.path.dirname(sys.executable)) or shutil.which('mkdocs')
    command = [mkdocs] if mkdocs else [sys.executable, '-m', 'mkdocs']
    built = subprocess.run([*command, 'build', '--strict', '-f', str(tmp_path / 'mkdocs.yml')], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, NO_MKDOCS_2_WARNING='1'))
    assert built.returncode != 0, 'a link to a missing heading built without a word'
    assert "does not contain an anchor '#results'" in built.stderr, built.stderr[-2000:]
    (docs / 'index.md').write_text('# Home\n\nSee [the results](other.md#the-complete-table).\n')
    built = subprocess.run([*command, 'build', '--strict', '-f', str(tmp_path / 'mkdocs.yml')], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, NO_MKDOCS_2_WARNING='1'))
    assert built.returncode == 0, built.stderr[-2000:]


def test_the_segmentation_example_names_the_extra_that_brings_pillow():
    with open(os.path.join(ROOT, 'pyproject.toml'), encoding='utf-8') as stream:
        extras = stream.read().split('[project.optional-dependencies]')[1].split('\n[')[0]
    with_pillow = re.findall(r'^([\w-]+) = \[[^\]]*"pillow', extras, flags=re.MULTILINE | re.IGNORECASE)
    assert with_pillow, 'no extra declares Pillow, which examples/segmentation.py needs'
    with open(os.path.join(ROOT, 'examples', 'segmentation.py'), encoding='utf-8') as stream:
        source = stream.read()
    assert any(f"internutopia[{name}]" in source for name in with_pillow)
    assert 'from PIL import Image' in source
