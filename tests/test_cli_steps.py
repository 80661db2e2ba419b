"""``internutopia run --steps N`` says what it counts and counts what it says."""

from __future__ import annotations

from internutopia.cli import run
from internutopia.cli.command_line import _parser


def test_run_steps_counts_steps_of_the_env_as_its_help_says(capsys, tmp_path):
    """``--steps N``: N calls of ``env.step()``, each stepping every slot: N x env_num env-steps."""
    help_text = ' '.join(_parser()._subparsers._group_actions[0].choices['run'].format_help().split())
    assert 'stop after N steps of the env, each stepping every slot once (so at most N x env_num env-steps' in help_text
    summary = run(
        'configs/jetbot_point_nav.yaml', steps=5, env_num=2, results=str(tmp_path / 'r.jsonl'), progress=False)
    assert summary['steps'] == 5 and summary['env_steps'] == 10
