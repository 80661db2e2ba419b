"""The test run's own output says what matters: no reports among the progress dots, no warnings
from this project's code, and the slowest tests listed at the end (in CI's log too)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
import warnings

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_run_lists_its_slowest_tests():
    with open(os.path.join(ROOT, 'pyproject.toml'), encoding='utf-8') as stream:
        addopts = next(line for line in stream if line.startswith('addopts'))
    assert '--durations=25' in addopts


def test_the_backend_boundary_report_stays_out_of_the_progress_dots():
    done = subprocess.run([sys.executable, '-m', 'pytest', 'tests/test_backend_boundary.py', '-q', '-p', 'no:cacheprovider',
                           '-k', 'report'], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != 'INTERNUTOPIA_BOUNDARY_REPORT'})
    assert done.returncode == 0, done.stdout[-2000:]
    assert '[backend boundary]' not in done.stdout and 'import mujoco' not in done.stdout, done.stdout[-2000:]


def test_exporting_a_walking_policy_warns_nothing(tmp_path):
    """The training code's ONNX export (the TorchScript exporter, on purpose) used to print two
    deprecation warnings per export, 14 in a test run."""
    torch = pytest.importorskip('torch')
    pytest.importorskip('onnx')
    from internutopia_extension.robots.h1_locomotion.policy import train

    policy = types.SimpleNamespace(mlp_extractor=types.SimpleNamespace(policy_net=torch.nn.Linear(4, 8)),
                                   action_net=torch.nn.Linear(8, 10), device='cpu',
                                   observation_space=types.SimpleNamespace(shape=(4,)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        train.export_onnx(types.SimpleNamespace(policy=policy), tmp_path / 'policy.onnx')
    assert (tmp_path / 'policy.onnx').stat().st_size > 0
    assert not [str(w.message)[:80] for w in caught]
