"""The user-facing scripts (``examples/*.py``, the walking trainer, its evaluation and distillation)
given what a user gives them: bad counts, missing or unusable files and folders, a run folder that
already holds a run; each answers with a usage error (exit status 2, one line, nothing built or
written) or does what its docs promise (the files it writes, their content)."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / 'examples'


def example(name: str):
    """``examples/<name>.py`` as a module (its ``main`` not run)."""
    sys.path.insert(0, str(EXAMPLES))  # (generate_demos and train_bc import franka_pick_place)
    spec = importlib.util.spec_from_file_location(f'hunt_{name}', EXAMPLES / f'{name}.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def usage_error(capsys, main, argv: list[str] | None = None, monkeypatch=None, script: str = 'x') -> str:
    """Run ``main`` (with ``argv``, or as ``sys.argv`` when ``monkeypatch`` is given); it must stop with
    a usage error: exit status 2 and no traceback. Returns what it printed on stderr."""
    with pytest.raises(SystemExit) as stopped:
        if monkeypatch is not None:
            monkeypatch.setattr(sys, 'argv', [script, *(argv or [])])
            main()
        else:
            main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2, err
    assert 'Traceback' not in err and 'error: ' in err
    return err


def test_h1_example_refuses_counts_below_one_and_says_when_robots_did_not_arrive(capsys, monkeypatch):
    """``--max-steps 0`` crashed with ``UnboundLocalError``; a run too short to arrive ended in an
    ``AssertionError`` traceback (and checked nothing under ``python -O``)."""
    h1 = example('h1_vec_env')
    for argv in (['--max-steps', '0'], ['--max-steps', '-5'], ['--env-num', '0']):
        assert '--env-num and --max-steps must be >= 1' in usage_error(capsys, h1.main, argv, monkeypatch)
    monkeypatch.setattr(sys, 'argv', ['h1_vec_env.py', '--max-steps', '30', '--env-num', '1'])
    with pytest.raises(SystemExit) as stopped:
        h1.main()
    assert isinstance(stopped.value.code, str)  # (printed on stderr, exit status 1)
    assert stopped.value.code.startswith('not every h1 reached (3, 4) within 0.2 m in 30 steps: [')
    assert 'every robot arrived' not in capsys.readouterr().out


def test_point_nav_refuses_a_negative_episode_count_and_configs_it_cannot_run(capsys, monkeypatch, tmp_path):
    """``--episodes -1`` ran every episode but the last (a slice); a missing or non-point-nav config
    crashed with a traceback."""
    point_nav = example('point_nav')
    assert '--episodes must be >= 1; got -1' in usage_error(capsys, point_nav.main, ['--episodes', '-1'], monkeypatch)
    assert '--episodes must be >= 1; got 0' in usage_error(capsys, point_nav.main, ['--episodes', '0'], monkeypatch)
    missing = str(tmp_path / 'nope.yaml')
    assert f'{missing}: cannot read' in usage_error(capsys, point_nav.main, ['--config', missing], monkeypatch)
    franka = str(ROOT / 'configs' / 'franka_pick_place.yaml')
    err = usage_error(capsys, point_nav.main, ['--config', franka], monkeypatch)
    assert 'every episode must be a PointNavTaskCfg' in err


def test_franka_example_refuses_random_episode_flags_with_a_config_and_unwritable_results(capsys, monkeypatch, tmp_path):
    """With ``--config`` the random episodes' flags were silently ignored; an unwritable
    ``--results``, a zero count or step crashed with a traceback. The random run still writes its
    results file (checked before the run, written by it)."""
    franka = example('franka_pick_place')
    config = str(ROOT / 'configs' / 'franka_pick_place.yaml')
    err = usage_error(capsys, franka.main, ['--config', config, '--slots', '4', '--table'], monkeypatch)
    assert "--slots, --table: for the random episodes only; a --config's episodes run as its file says" in err
    jetbot = str(ROOT / 'configs' / 'jetbot_point_nav.yaml')
    assert 'every episode must be a ManipulationTaskCfg' in usage_error(capsys, franka.main, ['--config', jetbot], monkeypatch)
    assert '--episodes and --slots must be >= 1' in usage_error(capsys, franka.main, ['--episodes', '0'], monkeypatch)
    assert '--physics-dt must be > 0 seconds' in usage_error(capsys, franka.main, ['--physics-dt', '0'], monkeypatch)
    (tmp_path / 'a_file').write_text('')
    err = usage_error(capsys, franka.main, ['--results', str(tmp_path / 'a_file' / 'r.jsonl')], monkeypatch)
    assert f"--results {tmp_path / 'a_file' / 'r.jsonl'}: cannot be written" in err

    results = tmp_path / 'results' / 'pick.jsonl'
    monkeypatch.setattr(sys, 'argv', ['franka_pick_place.py', '--episodes', '1', '--slots', '1', '--results', str(results)])
    franka.main()
    assert f'all 1 cubes placed (results: {results})' in capsys.readouterr().out
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) == 1 and records[0]['episode_index'] == 0 and records[0]['metrics']['success'] is True


def test_generate_demos_refuses_a_used_folder_before_the_run_and_records_into_a_new_one(capsys, monkeypatch, tmp_path):
    """An existing dataset at ``--out`` was found only after the env was built, as a
    ``FileExistsError`` traceback telling a command-line user to ``pass overwrite=True``."""
    demos = example('generate_demos')
    used = tmp_path / 'used'
    used.mkdir()
    (used / 'keep.txt').write_text('mine')
    err = usage_error(capsys, demos.main, ['--out', str(used), '--episodes', '1', '--slots', '1'], monkeypatch)
    assert 'already exists and is not empty; choose a new folder or pass --overwrite' in err
    assert sorted(os.listdir(used)) == ['keep.txt'] and (used / 'keep.txt').read_text() == 'mine'
    (tmp_path / 'a_file').write_text('')
    err = usage_error(capsys, demos.main, ['--out', str(tmp_path / 'a_file' / 'd'), '--episodes', '1'], monkeypatch)
    assert 'cannot be created' in err
    for argv in (['--episodes', '0'], ['--slots', '-1']):
        assert '--episodes and --slots must be >= 1' in usage_error(capsys, demos.main, ['--out', str(tmp_path / 'x'), *argv],
                                                                    monkeypatch)
    assert not (tmp_path / 'x').exists()

    out = tmp_path / 'demos'
    monkeypatch.setattr(sys, 'argv', ['generate_demos.py', '--out', str(out), '--episodes', '1', '--slots', '1', '--stream'])
    demos.main()
    assert f'1 episodes, 1 succeeded, 1 saved to {out}' in capsys.readouterr().out
    info = json.loads((out / 'meta' / 'info.json').read_text())
    assert info['total_episodes'] == 1 and info['total_frames'] > 100


def test_train_bc_refuses_bad_counts_before_training_and_datasets_it_cannot_learn_from(capsys, monkeypatch, tmp_path):
    """``--epochs 0`` crashed with ``UnboundLocalError`` after loading; ``--eval-episodes 0`` or
    ``--slots 0`` only after the whole training; a missing or foreign dataset with a traceback."""
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env
    from internutopia.macros import gm
    from internutopia.recording import Recorder
    from internutopia_extension import import_extensions
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
    from internutopia_extension.configs.tasks import FiniteStepTaskCfg

    bc = example('train_bc')
    for flag in ('--epochs', '--eval-episodes', '--slots'):
        err = usage_error(capsys, bc.main, ['--data', str(tmp_path / 'nope'), flag, '0'], monkeypatch)
        assert f'{flag} must be >= 1; got 0' in err
    assert 'holds no dataset' in usage_error(capsys, bc.main, ['--data', str(tmp_path / 'nope')], monkeypatch)

    # A dataset of a jetbot run: LeRobot opens it, but it has none of the columns the policy learns from.
    import_extensions()
    task = FiniteStepTaskCfg(max_steps=4, scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd', robots=[JetbotRobotCfg()])
    config = Config(simulator=SimConfig(physics_dt=1 / 60, rendering_dt=1 / 60), env_num=1, metrics_save_path='none',
                    task_configs=[task])
    jetbot = tmp_path / 'jetbot'
    with Env(config) as env:
        Recorder(jetbot, keep_failed=True).attach(env)
        env.reset()
        while not env.finished:
            if env.step([{'jetbot': {'move_by_speed': [0.1, 0.0]}}])[2][0]:
                env.reset([0])
    err = usage_error(capsys, bc.main, ['--data', str(jetbot)], monkeypatch)
    assert (f"{jetbot} is not a pick-and-place dataset of examples/generate_demos.py: it has no column "
            "'franka.controllers.arm_ik_controller.eef_position.0' (and 13 more)") in err


def test_record_video_and_segmentation_refuse_outputs_they_could_only_fail_to_write_at_the_end(capsys, monkeypatch, tmp_path):
    """A video or picture whose folder could not be made was found after the whole run (a traceback
    at ``close``/``save``); ``--max-depth 0`` drew a depth panel of NaN with warnings; ``--steps -3``
    ran a step silently."""
    (tmp_path / 'a_file').write_text('')
    record = example('record_video')
    err = usage_error(capsys, record.main, ['--out', str(tmp_path / 'a_file' / 'v.gif'), '--steps', '8'])
    assert 'its folder cannot be created' in err
    assert '--width and --height must be in 1..8192' in usage_error(capsys, record.main, ['--out', str(tmp_path / 'v.gif'),
                                                                                          '--width', '99999'])
    segmentation = example('segmentation')
    for argv, message in ((['--max-depth', '0'], '--max-depth must be > 0 metres; got 0.0'),
                          (['--steps', '-3'], '--steps must be >= 1; got -3'),
                          (['--size', '0', '0'], '--size W H must be in 1..8192 pixels each'),
                          (['--out', str(tmp_path / 'seg.txt')], 'Pillow cannot write .txt; name a .png'),
                          (['--out', str(tmp_path / 'a_file' / 'seg.png')], 'does not exist or is not writable')):
        assert message in usage_error(capsys, segmentation.main, ['--out', str(tmp_path / 'seg.png'), *argv], monkeypatch)
    assert sorted(os.listdir(tmp_path)) == ['a_file']


def test_training_examples_refuse_counts_below_one(capsys, tmp_path):
    """``--eval-episodes 0`` printed NaN success rates after a whole training; ``--threads 0``
    and an ``--out`` that cannot be made crashed with a traceback."""
    ppo, reach = example('train_ppo'), example('train_franka_reach')
    for module in (ppo, reach):
        for flag in ('--steps', '--num-envs', '--eval-episodes', '--eval-every', '--threads'):
            assert f'{flag} must be >= 1; got 0' in usage_error(capsys, module.main, [flag, '0', '--out', str(tmp_path / 'o')])
        (tmp_path / 'a_file').write_text('')
        assert 'cannot be created' in usage_error(capsys, module.main, ['--out', str(tmp_path / 'a_file' / 'o')])
    assert '--learning-rate must be > 0' in usage_error(capsys, reach.main, ['--learning-rate', '0', '--out', str(tmp_path / 'o')])
    assert not (tmp_path / 'o').exists()


def test_ppo_example_writes_its_learning_curve_as_strict_json(tmp_path, capsys):
    """``learning_curve.json`` held ``NaN`` (the training success before any training episode
    ended), which is not JSON: strict readers (``jq``, browsers) refused the file. Its progress
    lines printed ``nan%`` for it."""
    pytest.importorskip('stable_baselines3')
    ppo = example('train_ppo')
    summary = ppo.main(['--steps', '512', '--num-envs', '2', '--eval-episodes', '2', '--eval-every', '256', '--out', str(tmp_path)])
    progress = [line for line in capsys.readouterr().out.splitlines() if 'train success (last 100)' in line]
    assert progress and not any('nan' in line for line in progress)
    figures = [line.split('train success (last 100)')[1].split()[0] for line in progress]
    assert all(figure == 'n/a' or 0.0 <= float(figure.rstrip('%')) <= 100.0 for figure in figures), figures

    def refuse(constant: str) -> None:
        raise ValueError(f'{constant} is not JSON')

    saved = json.loads((tmp_path / 'learning_curve.json').read_text(), parse_constant=refuse)
    assert saved['steps'] == summary['steps'] >= 512 and len(saved['curve']) == len(summary['curve'])
    assert saved['curve'][0]['steps'] == 0 and saved['curve'][0]['train_success'] is None
    assert (tmp_path / 'model.zip').stat().st_size > 0


def test_training_progress_lines_say_what_their_figures_count():
    """The PPO example printed ``nan%`` as the training success before a training episode ended;
    the reach example printed "mean steps 241.0" beside env steps, though it counts physics steps."""
    ppo, reach = example('train_ppo'), example('train_franka_reach')
    point = {'steps': 256, 'eval_success': 0.5, 'eval_spl': 0.25, 'train_success': float('nan'), 'minutes': 0.5}
    assert ppo.progress_line(point) == ('steps     256  eval success  50.0%  SPL 0.250  train success (last 100)    n/a'
                                        '    0.5 min')
    assert ppo.progress_line({**point, 'train_success': 0.75}).endswith('train success (last 100)  75.0%    0.5 min')
    line = reach.progress_line({'steps': 4096, 'eval_success': 0.25, 'eval_steps': 241.0, 'minutes': 1.25})
    assert line == 'steps    4096  eval success  25.0%  mean episode 241 physics steps    1.2 min'


def _checkpoint_steps(path: Path) -> int:
    with zipfile.ZipFile(path) as archive:
        return int(json.loads(archive.read('data'))['num_timesteps'])


def _progress_steps(out: Path) -> list[int]:
    with open(out / 'progress.csv', encoding='utf-8') as stream:
        return [int(row['steps']) for row in csv.DictReader(stream)]


def test_walking_trainer_saves_its_end_and_never_overwrites_or_mixes_another_run(capsys, tmp_path):
    """The sb3 trainer saved only at ``--checkpoint-every`` multiples: the steps after the last one
    (all of a run shorter than it) were trained and lost. A run without ``--resume``, an sb3
    ``--resume`` over rsl_rl's checkpoint, or ``--robot gr1 --resume`` over Aliengo's run (the same
    observation size) overwrote that run's checkpoint and policy and appended to its progress."""
    from internutopia_extension.robots.h1_locomotion.policy import train

    out = tmp_path / 'run'
    small = ['--num-envs', '2', '--rollout', '128']
    # 256 env steps per rollout: rollouts end at 256, 512 (a checkpoint) and 768 (the end of the run).
    train.main(['--robot', 'aliengo', '--out', str(out), '--steps', '700', '--checkpoint-every', '512', *small])
    assert _progress_steps(out) == [512, 768] and _checkpoint_steps(out / 'checkpoint.zip') == 768
    assert sorted(os.listdir(out)) == ['aliengo_walk.onnx', 'checkpoint.zip', 'progress.csv']
    capsys.readouterr()
    before = {name: (out / name).read_bytes() for name in os.listdir(out)}

    for argv, message in (
            (['--robot', 'aliengo'], f'{out} holds a run (checkpoint.zip, progress.csv (2 rows)): a new run would overwrite'),
            (['--robot', 'gr1', '--resume'], f"{out} holds aliengo's run (aliengo_walk.onnx); train --robot gr1 in another --out"),
            (['--robot', 'aliengo', '--resume', '--trainer', 'rsl_rl'], "holds the sb3 trainer's checkpoint.zip"),
            (['--robot', 'aliengo', '--resume', '--init-from', str(out / 'aliengo_walk.onnx')], '--init-from starts a new run')):
        assert message in usage_error(capsys, train.main, ['--out', str(out), *argv, *small])
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before

    train.main(['--robot', 'aliengo', '--out', str(out), '--resume', '--steps', '512', *small])
    assert 'the run is at 768 steps already (--steps 512): nothing to train' in capsys.readouterr().out
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before

    rsl = tmp_path / 'rsl'
    rsl.mkdir()
    (rsl / 'checkpoint.pt').write_bytes(b'')
    err = usage_error(capsys, train.main, ['--out', str(rsl), '--resume', *small])
    assert "holds the rsl_rl trainer's checkpoint.pt; resume it with --trainer rsl_rl" in err
    for argv, message in ((['--checkpoint-every', '0'], '--checkpoint-every must be at least 1; got 0'),
                          (['--rollout', '1', '--num-envs', '1'], '--rollout x --num-envs must be at least 2'),
                          (['--max-std', '0'], '--max-std must be > 0'),
                          (['--init-from', str(tmp_path / 'nope.onnx')], 'no such file'),
                          (['--plot'], 'progress.csv, which does not exist')):
        assert message in usage_error(capsys, train.main, ['--out', str(tmp_path / 'new'), *argv])
    assert not (tmp_path / 'new').exists()


def test_evaluation_reports_no_drift_it_could_not_measure_and_refuses_bad_arguments(capsys, tmp_path):
    """Standing for ``--seconds`` no longer than the 2 s it settles reported a drift from the
    origin (1 m, at a negative speed); a missing policy, an unwritable ``--json`` (written after
    every measurement) or ``--num-envs 0`` ended in a traceback."""
    from internutopia_extension.robots.h1_locomotion.policy import evaluate

    result = evaluate.main(['--measures', 'standing', '--num-envs', '2', '--seconds', '1'])['standing']
    for case in ('from_spawn', 'after_walking'):
        assert set(result[case]) == {'fall_rate', 'episodes'} and result[case]['episodes'] == 1
    assert result['note'] == 'no drift: it is measured from 2 s after the stop to the end, and the run stood 1 s'
    capsys.readouterr()
    (tmp_path / 'a_file').write_text('')
    for argv, message in ((['--json', str(tmp_path / 'a_file' / 'e.json')], 'does not exist or is not writable'),
                          (['--policy', str(tmp_path / 'nope.onnx')], "no such file ('default' is the shipped policy)"),
                          (['--num-envs', '0'], '--num-envs must be >= 1; got 0'),
                          (['--seconds', '0'], '--seconds and --physics-dt must be > 0')):
        assert message in usage_error(capsys, evaluate.main, argv)


def test_distillation_refuses_arguments_that_would_write_no_student(capsys, tmp_path):
    """``--rounds 0`` printed ``student written to .../h1_walk.onnx`` and wrote none; ``--steps 0``,
    a bad ``--hidden``, a missing teacher crashed with a traceback, after building the env."""
    from internutopia_extension.robots.h1_locomotion.policy import distill

    out = tmp_path / 'student'
    for argv, message in ((['--rounds', '0'], '--rounds must be >= 1; got 0'),
                          (['--steps', '0'], '--steps must be >= 1; got 0'),
                          (['--hidden', '128,x'], "--hidden '128,x': comma-separated layer widths >= 1"),
                          (['--teacher', str(tmp_path / 'nope.onnx')], 'no such file'),
                          (['--robot', 'gr1'], "--teacher default is H1's shipped policy"),
                          (['--stand-share', '1.5'], '--stand-share must be between 0 and 1')):
        err = usage_error(capsys, distill.main, ['--out', str(out), *argv])
        assert message in err and 'student written' not in err
    assert not out.exists()
