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


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path):
    with pytest.raises(ValueError, match=f'{tmp_path} is not a checkout of this project'):
        measure_tree_ab(tmp_path, ROOT, 'internutopia/JetbotPointNav-v0')
