"""The benchmark runs end to end and reports every figure the docs quote (values, not speed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_bench_json_has_every_figure():
    result = subprocess.run([sys.executable, '-m', 'internutopia.bench', '--robots', 'jetbot', '--env-nums', '2',
                             '--cameras', 'off', '--steps', '30', '--json'], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures['machine']['cores'] >= 1
    rows = {row['api']: row for row in figures['rows']}
    assert set(rows) == {'dict', 'array'}
    for row in rows.values():
        assert row['robot'] == 'jetbot' and row['env_num'] == 2 and row['cameras'] is False
        assert row['env_steps_per_s'] > 0 and row['ratio_vs_limit'] > 0 and row['ratio_vs_async'] > 0
        assert row['ratio_vs_limit'] == pytest.approx(row['env_steps_per_s'] / row['limit_env_steps_per_s'], rel=1e-2, abs=1e-3)
    assert rows['dict']['reset_same_structure_steps'] > 0 and rows['dict']['reset_new_structure_ms'] > 0
    assert 0 < figures['startup_s']['jetbotx2'] < 60 and figures['peak_memory_mb']['jetbotx2'] > 10


def test_bench_rejects_bad_arguments():
    result = subprocess.run([sys.executable, '-m', 'internutopia.bench', '--robots', 'walle'], capture_output=True, text=True)
    assert result.returncode == 2 and 'unknown robot' in result.stderr
