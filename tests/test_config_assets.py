"""``package://`` paths: YAML names the package's own assets portably, so a config copied anywhere
validates and runs."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import yaml
from pydantic import ValidationError

from internutopia import cli
from internutopia.core.config import Config, TaskCfg
from internutopia.core.config.files import as_package_path, resolve_package_path
from internutopia.macros import gm
from internutopia_extension.configs.objects import UsdObjCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, 'configs')
EMPTY = 'package://internutopia/assets/scenes/empty.usd'


def test_a_package_path_names_the_installed_file_and_is_written_back_as_one(tmp_path):
    task = FiniteStepTaskCfg(scene_asset_path=EMPTY, robots=[JetbotRobotCfg()],
                             objects=[UsdObjCfg(name='rooms', usd_path='package://internutopia/assets/scenes/two_rooms.usda')])
    assert os.path.samefile(task.scene_asset_path, os.path.join(gm.ASSET_PATH, 'scenes', 'empty.usd'))
    assert os.path.isfile(task.objects[0].usd_path)
    path = tmp_path / 'c.yaml'
    Config(task_configs=[task]).to_yaml(path)
    written = yaml.safe_load(path.read_text())['task_configs'][0]
    assert written['scene_asset_path'] == EMPTY
    assert written['objects'][0]['usd_path'] == 'package://internutopia/assets/scenes/two_rooms.usda'
    assert Config.from_yaml(path).task_configs[0] == task
    # an absolute path inside the package is written the portable way too
    absolute = FiniteStepTaskCfg(scene_asset_path=os.path.join(gm.ASSET_PATH, 'scenes', 'office.xml'))
    assert absolute.model_dump(mode='json')['scene_asset_path'] == 'package://internutopia/assets/scenes/office.xml'
    assert as_package_path('/elsewhere/scene.xml') == '/elsewhere/scene.xml'


@pytest.mark.parametrize('path, message', [
    ('package://no_such_package_x/scene.xml', "no installed Python package 'no_such_package_x'"),
    ('package://internutopia/../../etc/passwd', 'must name a file inside the package'),
    ('package://internutopia/', 'must name a file inside the package'),
])
def test_bad_package_paths_are_clear_errors(path, message):
    with pytest.raises(ValueError, match=message):
        resolve_package_path(path)
    with pytest.raises(ValidationError, match='scene_asset_path'):
        TaskCfg(type='FiniteStepTask', scene_asset_path=path)


def test_the_shipped_configs_name_their_scenes_by_package():
    for name in sorted(os.listdir(CONFIGS)):
        if not name.endswith('.yaml'):
            continue
        with open(os.path.join(CONFIGS, name), encoding='utf-8') as stream:
            data = yaml.safe_load(stream)
        for task in data['task_configs']:
            scene = task.get('scene_asset_path')
            assert scene is None or scene.startswith('package://internutopia/'), (name, scene)


@pytest.mark.parametrize('name', ['h1_example.yaml', 'jetbot_point_nav.yaml'])
def test_a_shipped_config_copied_anywhere_validates_and_runs(tmp_path, monkeypatch, capsys, name):
    copy = tmp_path / 'mine' / name
    copy.parent.mkdir()
    shutil.copy(os.path.join(CONFIGS, name), copy)
    elsewhere = tmp_path / 'work'
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # neither the checkout nor the copy's folder
    assert cli.main(['validate', str(copy)]) == cli.EXIT_OK
    assert ': OK (' in capsys.readouterr().out
    results = elsewhere / 'r.jsonl'
    assert cli.main(['run', str(copy), '--steps', '3', '--env-num', '2', '--no-progress', '--json',
                     '--results', str(results)]) == cli.EXIT_OK
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['steps'] == 3
    scenes = {t.scene_asset_path for t in Config.from_yaml(copy).task_configs} - {None}
    assert scenes and all(os.path.isfile(s) for s in scenes)
