"""Distilling a walking policy into a smaller network (``policy/distill.py``): a short run gathers the
teacher's labels on states the student meets, the student learns them, and the file it writes runs
in the walker."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from internutopia_extension.robots.h1_locomotion import gait
from internutopia_extension.robots.h1_locomotion.policy.distill import COLUMNS, distill
from internutopia_extension.robots.h1_locomotion.walker import POLICY_PATH, OnnxPolicy


def test_a_short_distillation_learns_the_teachers_actions_and_writes_a_walker_policy(tmp_path):
    path = distill(out=tmp_path, hidden=(64,), rounds=2, steps=100, num_envs=8, epochs=30, seed=3)
    with open(tmp_path / 'distill.csv', newline='') as stream:
        rows = list(csv.DictReader(stream))
    assert [int(row['round']) for row in rows] == [1, 2] and list(rows[0]) == list(COLUMNS)
    # Each tick labels every robot's observation and its mirror image: 2 x 8 robots x 100 ticks a
    # round, less the held-out twentieth.
    assert 2 * 8 * 100 * 0.9 < int(rows[0]['samples']) < 2 * 8 * 100 and int(rows[1]['samples']) > int(rows[0]['samples'])
    assert float(rows[0]['beta']) == 1.0 and float(rows[1]['beta']) == 0.5
    for row in rows:  # it learns: the held-out states' error falls once it has trained on the others
        assert float(row['heldout_mse_after']) < float(row['heldout_mse_before'])
    # The student is a policy the walker loads (its file records the gait's action scales), and after
    # this short run it already acts nearer its teacher than standing still would, on observations
    # of upright robots given commands.
    student, teacher = OnnxPolicy(path), OnnxPolicy(POLICY_PATH)
    commands = np.array([[0.5, 0, 0], [1.0, 0, 0], [0, 0.3, 0], [0, -0.3, 0], [0, 0, 0.8], [0, 0, -0.8], [0.4, 0.2, 0.3], [0, 0, 0]])
    upright, zeros = np.tile([1.0, 0, 0, 0], (8, 1)), np.zeros((8, 3))
    obs = gait.observe(upright, zeros, zeros, np.zeros((8, 10)), np.zeros((8, 10)), np.zeros((8, 10)), commands,
                       np.linspace(0.0, 0.9, 8)).astype(np.float32)
    assert np.abs(student(obs) - teacher(obs)).mean() < 0.8 * np.abs(teacher(obs)).mean()


def test_the_default_teacher_is_h1s_alone(tmp_path):
    with pytest.raises(ValueError, match="H1's shipped policy; give the path of the aliengo policy"):
        distill(robot='aliengo', out=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing written
