"""The staggered-starts benchmark (``internutopia.bench.staggered``): its staggered env's slots
really tick on as many schedules as it has start groups (the network called on nearly every
step instead of once a tick), every slot keeps running while timed, and bad options are refused
by name (its command line: tests/test_bench_hunt.py)."""

from __future__ import annotations

import onnxruntime
import pytest

from internutopia.bench.staggered import _measure, format_row, measure_staggered


def test_staggered_slots_call_the_network_on_every_schedule():
    own = dict(vars(onnxruntime.InferenceSession))
    row = _measure('h1_walking', 5, 'array', 5, 2, 24)
    assert dict(vars(onnxruntime.InferenceSession)) == own  # (the counting wrapper is taken off again)
    # Together: one call a 50 Hz tick, every 4.8 physics steps at 240 Hz. Five groups one physics
    # step apart: a group ticks on four of every five steps at least.
    assert 0.15 <= row['network_calls_per_step_together'] <= 0.25
    assert row['network_calls_per_step_staggered'] >= 0.8
    assert row['step_us_together'] > 0 and row['step_us_staggered'] > 0 and row['staggered_over_together'] > 0
    assert '5 start groups' in format_row(row) and '0.21 -> ' in format_row(row)


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match=r'groups must be between 1 and env_num \(4\); got 5'):
        measure_staggered('h1_walking', 4, groups=5)
    with pytest.raises(ValueError, match="unknown api 'tensor'"):
        measure_staggered('h1_walking', 4, api='tensor')
