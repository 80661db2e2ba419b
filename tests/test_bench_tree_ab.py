"""The two-checkout lockstep benchmark (``internutopia.bench.tree_ab``): it times both trees in
turns, reports what it measured, refuses what is not a checkout, and leaves no worker behind."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from internutopia.bench.tree_ab import measure_tree_ab

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_against_itself_steps_in_turns_and_leaves_no_worker():
    me = psutil.Process(os.getpid())
    before_children = {child.pid for child in me.children(recursive=True)}
    row = measure_tree_ab(ROOT, ROOT, 'internutopia/JetbotPointNav-v0', num_envs=2, pairs=3, steps=4, timeout_s=300)
    assert row['pairs'] == 3 and row['steps_per_block'] == 4 and row['num_envs'] == 2
    assert row['before'] == row['after'] == str(ROOT)
    for tree in ('before', 'after'):
        assert row[f'vector_step_ms_{tree}'] > 0.0
        assert 0.0 < row[f'physics_share_{tree}'] <= 1.0  # (the world's step was timed inside each block)
    assert row['ratio_q1'] <= row['after_over_before'] <= row['ratio_q3']
    assert 0.2 < row['after_over_before'] < 5.0  # one tree against itself: about 1 (a noisy host aside)
    left = {child.pid for child in me.children(recursive=True)} - before_children
    assert not left, f'workers left behind: {left}'


def test_a_benchmark_case_is_compared_through_each_api_in_turns():
    """``--robots``: ``vec_env.Env``'s own step of a benchmark case, through ``step_arrays`` and
    through ``step``, timed in both trees with the world's step inside; no worker left behind."""
    me = psutil.Process(os.getpid())
    before_children = {child.pid for child in me.children(recursive=True)}
    for api in ('array', 'dict'):
        row = measure_tree_ab(ROOT, ROOT, 'jetbot', num_envs=2, pairs=3, steps=4, timeout_s=300, api=api)
        assert row['id'] == 'jetbot' and row['api'] == api and row['num_envs'] == 2
        for tree in ('before', 'after'):
            assert row[f'vector_step_ms_{tree}'] > 0.0
            assert 0.0 < row[f'physics_share_{tree}'] <= 1.0
        assert 0.2 < row['after_over_before'] < 5.0
    assert not {child.pid for child in me.children(recursive=True)} - before_children
    with pytest.raises(ValueError, match=r"api must be one of \('array', 'dict'\) \(or None for a Gymnasium id\); got 'arrays'"):
        measure_tree_ab(ROOT, ROOT, 'jetbot', api='arrays')


def test_cases_are_checked_against_the_trees_compared(tmp_path, capsys, monkeypatch):
    """A case one tree lacks is refused naming that tree, as an id is; ``--api`` goes with
    ``--robots`` only, ``--robots`` and ``--ids`` not together, an unknown API is named."""
    from internutopia.bench import tree_ab

    def tree(root: Path, cases: list[str]) -> Path:
        _fake_tree(root, [])
        (root / 'internutopia' / 'bench').mkdir()
        (root / 'internutopia' / 'bench' / '__init__.py').write_text('')
        (root / 'internutopia' / 'bench' / 'cases.py').write_text(f'CASES = {dict.fromkeys(cases)!r}\n')
        return root

    old, new = tree(tmp_path / 'old', ['jetbot', 'gone']), tree(tmp_path / 'new', ['jetbot', 'fresh'])
    assert tree_ab.tree_cases(old) == ['gone', 'jetbot']

    def refused(*argv: str) -> str:
        with pytest.raises(SystemExit) as exit_info:
            tree_ab.main(['--before', str(old), '--after', str(new), *argv])
        assert exit_info.value.code == 2
        return capsys.readouterr().err

    assert "unknown cases ['h1'] in --robots: neither tree has them" in refused('--robots', 'h1')
    assert f"cases ['fresh'] in --robots are not in the before tree {old}" in refused('--robots', 'jetbot,fresh')
    assert f"cases ['gone'] in --robots are not in the after tree {new}" in refused('--robots', 'gone')
    assert "unknown API 'arrays' in --api; choose from array, dict" in refused('--robots', 'jetbot', '--api', 'arrays')
    assert '--api goes with --robots' in refused('--api', 'dict')
    assert 'not allowed with argument --ids' in refused('--ids', 'internutopia/H1Walk-v0', '--robots', 'jetbot')
    measured = []
    monkeypatch.setattr(tree_ab, 'measure_tree_ab', lambda before, after, name, *rest, api=None: measured.append((name, api)) or {
        'id': name, 'api': api, 'num_envs': 64, 'pairs': 1, 'steps_per_block': 1, 'vector_step_ms_before': 1.0,
        'vector_step_ms_after': 1.0, 'after_over_before': 1.0, 'ratio_q1': 1.0, 'ratio_q3': 1.0,
        'physics_share_before': 0.5, 'physics_share_after': 0.5, 'load': 0.0})
    tree_ab.main(['--before', str(old), '--after', str(new), '--robots', 'jetbot', '--api', 'array,dict'])
    assert measured == [('jetbot', 'array'), ('jetbot', 'dict')]
    assert 'jetbot x64 dict: 1.000 ms before' in capsys.readouterr().out


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path):
    with pytest.raises(ValueError, match=f'{tmp_path} is not a checkout of this project'):
        measure_tree_ab(tmp_path, ROOT, 'internutopia/JetbotPointNav-v0')


def _fake_tree(root: Path, ids: list[str]) -> Path:
    """A folder that looks like a checkout whose ``internutopia.envs`` registers ``ids``."""
    (root / 'internutopia' / 'envs').mkdir(parents=True)
    (root / 'internutopia' / '__init__.py').write_text('')
    (root / 'internutopia' / 'envs' / '__init__.py').write_text(
        'import gymnasium\n' + ''.join(f'gymnasium.register(id={i!r}, entry_point="builtins:object")\n' for i in ids))
    return root


def test_ids_are_checked_against_the_trees_compared_not_the_running_one(tmp_path, capsys, monkeypatch):
    from internutopia.bench import tree_ab

    old = _fake_tree(tmp_path / 'old', ['internutopia/Both-v0', 'internutopia/Gone-v0'])
    new = _fake_tree(tmp_path / 'new', ['internutopia/Both-v0', 'internutopia/Fresh-v0'])
    assert tree_ab.tree_ids(old) == ['internutopia/Both-v0', 'internutopia/Gone-v0']

    def refused(ids: str) -> str:
        with pytest.raises(SystemExit) as exit_info:
            tree_ab.main(['--before', str(old), '--after', str(new), '--ids', ids])
        assert exit_info.value.code == 2
        return capsys.readouterr().err

    # an id of the running tree (this checkout) that neither compared tree has: refused
    error = refused('internutopia/JetbotPointNav-v0')
    assert "unknown ids ['internutopia/JetbotPointNav-v0'] in --ids: neither tree has them" in error
    assert f'--before {old}' in error and f'--after {new}' in error
    error = refused('internutopia/Both-v0,internutopia/Fresh-v0')  # only in the after tree
    assert f"ids ['internutopia/Fresh-v0'] in --ids are not in the before tree {old}" in error
    assert "ids of both trees: ['internutopia/Both-v0']" in error
    error = refused('internutopia/Gone-v0')
    assert f"ids ['internutopia/Gone-v0'] in --ids are not in the after tree {new}" in error

    measured = []

    class Measured(Exception):
        pass

    def measure(before, after, env_id, *rest, **options):
        measured.append(env_id)
        raise Measured

    monkeypatch.setattr(tree_ab, 'measure_tree_ab', measure)
    with pytest.raises(Measured):  # an id of both trees passes, though the running tree has none of that name
        tree_ab.main(['--before', str(old), '--after', str(new), '--ids', 'internutopia/Both-v0'])
    assert measured == ['internutopia/Both-v0']


def test_a_tree_whose_ids_cannot_be_listed_is_named(tmp_path, capsys):
    from internutopia.bench import tree_ab

    broken = _fake_tree(tmp_path / 'broken', [])
    (broken / 'internutopia' / 'envs' / '__init__.py').write_text('raise ImportError("no gymnasium here")\n')
    with pytest.raises(SystemExit):
        tree_ab.main(['--before', str(broken), '--ids', 'internutopia/JetbotPointNav-v0'])
    assert f'--before {broken}: its ids cannot be listed: tree {broken}: cannot import internutopia.envs ' \
           '(ImportError: no gymnasium here)' in capsys.readouterr().err
