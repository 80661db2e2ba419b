"""The Gymnasium rows of the benchmark (``internutopia.bench.gym_step``): the limit replays exactly
the motion of the vector env it is paired with, resets included. (No timing is asserted.)"""

from __future__ import annotations

import signal
import time
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.bench.gym_step import GymLimit, main


def test_the_limit_replays_the_vector_steps_motion_bit_for_bit_through_resets() -> None:
    # (SAME_STEP: every vector step steps; NEXT_STEP's step after every env ended only starts them)
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=3, max_steps=30, autoreset_mode='SameStep')
    world = env.unwrapped._vec.runner.world
    env.reset(seed=1)
    limit = GymLimit(world)
    limit.start_round()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(8):
        _, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
        ended += int(np.sum(terminated | truncated))
        limit.end_vector_step()
    (part,) = limit.parts
    ours = part.after.copy()  # positions and velocities after ours' last physics step
    written = [rows.tolist() for _, rows, _, _ in part.steps if len(rows)]
    seconds, clean = limit.replay_steps()
    assert ended == 3 and written == [[0, 1, 2]]  # the episodes' time limit, then their resets in the replay
    assert seconds.shape == clean.shape == (8,) and np.all(seconds > 0)
    np.testing.assert_array_equal(part.batch.state[:, part.motion], ours)
    assert not np.array_equal(part.start[:, part.motion], ours)  # (it moved)
    limit.close()
    assert 'step' not in vars(world) and 'rollout' not in vars(world)  # the world's own step and rollout are back
    env.close()


def test_the_limit_replays_fused_physics_steps_as_ours_ran_them() -> None:
    """H1Walk-v0 advances an action's four physics steps in one call (nothing but the physics runs
    between them): the limit replays each call with as many steps, and ends where ours did."""
    env = gym.make_vec('internutopia/H1Walk-v0', num_envs=3)
    world = env.unwrapped._vec.runner.world
    env.reset(seed=1)
    limit = GymLimit(world)
    limit.start_round()
    rng = np.random.default_rng(0)
    for _ in range(6):
        env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
        limit.end_vector_step()
    (part,) = limit.parts
    assert [steps for *_, steps in part.steps] == [4] * 6
    ours = part.after.copy()
    seconds, _ = limit.replay_steps()
    assert seconds.shape == (6,)
    np.testing.assert_array_equal(part.batch.state[:, part.motion], ours)
    limit.close()
    env.close()


def test_bad_arguments_name_the_valid_values(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(['--ids', 'internutopia/NoSuch-v0'])
    assert 'internutopia/H1Walk-v0' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(['--num-envs', '0'])
    with pytest.raises(SystemExit):
        main(['--ab', 'one_pass', '--pairs', '0'])
    assert '--pairs must be at least 1; got 0' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(['--plain-steps', '-1'])
    assert '--plain-steps must be 0 (no plain loop) or more; got -1' in capsys.readouterr().err


def test_the_plain_loop_times_the_physics_inside_a_users_loop() -> None:
    """The plain loop's share is the packs' step time over the loop's: each vector step's physics
    is timed (none recorded for a replay), and a world that runs nothing but physics between its
    steps would give 1."""
    from internutopia.bench.gym_step import _plain_share

    # (episodes end: resets run; SAME_STEP: every vector step steps, where NEXT_STEP's step after
    # every env ended only starts their next episodes)
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2, max_steps=12, autoreset_mode='SameStep')
    limit = GymLimit(env.unwrapped._vec.runner.world)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    calls = []
    physics, rollout = limit._step, limit._rollout

    def counted(steps: int = 1) -> None:
        calls.append(steps)
        physics() if steps == 1 else physics(steps)

    def counted_rollout(steps: int, fields: tuple[str, ...]) -> Any:
        calls.append(steps)  # (an action repeat in one recorded call: physics too)
        return rollout(steps, fields)

    limit._step, limit._rollout = counted, counted_rollout
    action = [np.zeros(env.action_space.shape, dtype=np.float32)]

    def prepare() -> None:  # (a user's policy: its time is not the loop's)
        action[0] = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
        time.sleep(0.05)

    share, step_s = _plain_share(lambda: env.step(action[0]), prepare, limit, 5)
    # (one call an action; an action repeat stops early on the step where every episode ended)
    assert 5 <= len(calls) <= 5 * env.unwrapped.action_repeat and limit.parts == [] and not limit.recording
    assert 0.0 < share < 1.0 and 0 < step_s < 0.05
    assert limit.physics_s == pytest.approx(share * step_s * 5)
    limit.close()
    env.close()


def test_the_config_id_runs_the_users_config_and_needs_it(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    from pathlib import Path

    import yaml

    shipped = yaml.safe_load((Path(__file__).resolve().parents[1] / 'configs' / 'jetbot_point_nav.yaml').read_text())
    config = str(tmp_path / 'jetbot_point_nav.yaml')  # (its records go nowhere: none written into the checkout)
    Path(config).write_text(yaml.safe_dump({**shipped, 'metrics_save_path': 'none'}))
    handler = signal.getsignal(signal.SIGINT)
    rows = main(['--ids', 'internutopia/Config-v0', '--config', config, '--num-envs', '2', '--pairs', '3', '--chunk', '2',
                 '--plain-steps', '4'])
    assert [(row['id'], row['num_envs'], row['pairs'], row['plain_steps']) for row in rows] == [('internutopia/Config-v0', 2, 3, 4)]
    assert 0.0 < rows[0]['physics_share'] <= 1.0 and rows[0]['env_steps_per_s'] > 0
    assert 0.0 < rows[0]['plain_physics_share'] < 1.0 and rows[0]['plain_env_steps_per_s'] > 0
    assert 'plain loop' in capsys.readouterr().out
    # The process's Ctrl-C handler is given back: an env made after it holds Ctrl-C over its calls
    # again (the benchmark's handler, left behind, let a later env's step be cut in half).
    assert signal.getsignal(signal.SIGINT) is handler
    for argv in (['--ids', 'internutopia/Config-v0'], ['--ids', 'internutopia/JetbotPointNav-v0', '--config', config],
                 ['--ids', 'internutopia/Config-v0', '--config', config, '--ab', 'one_pass']):
        with pytest.raises(SystemExit):
            main(argv)
    err = capsys.readouterr().err
    assert '--config PATH goes with the id internutopia/Config-v0' in err and '--ab measures the built-in ids' in err


def test_pairs_reach_the_switch_ab(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import internutopia.bench.gym_step as gym_step

    asked = []

    def measure(env_id, num_envs, switch, pairs=20, timeout_s=None):
        asked.append((env_id, num_envs, switch, pairs))
        return {'id': env_id, 'num_envs': num_envs, 'switch': switch}

    monkeypatch.setattr(gym_step, 'measure_switch_ab', measure)
    monkeypatch.setattr(gym_step, 'format_switch_ab', lambda row: f"{row['id']} {row['switch']}")
    main(['--ab', 'one_pass', '--pairs', '7', '--ids', 'internutopia/H1Walk-v0', '--num-envs', '8'])
    main(['--ab', 'fuse_steps', '--ids', 'internutopia/H1Walk-v0', '--num-envs', '8'])
    assert asked == [('internutopia/H1Walk-v0', 8, 'one_pass', 7), ('internutopia/H1Walk-v0', 8, 'fuse_steps', 20)]
    assert 'internutopia/H1Walk-v0 one_pass' in capsys.readouterr().out


def test_the_main_benchmark_checks_its_gym_ids(capsys: pytest.CaptureFixture[str]) -> None:
    from internutopia.bench.command import main as bench_main

    with pytest.raises(SystemExit):
        bench_main(['--robots', '', '--gym', 'internutopia/NoSuch-v0'])
    assert 'internutopia/JetbotPointNav-v0' in capsys.readouterr().err


def test_phases_time_each_part_of_the_vector_step() -> None:
    from internutopia.bench.gym_step import PHASES, _phases

    row = _phases('internutopia/JetbotPointNav-v0', 2, 5, {'max_steps': 12})  # (episodes end: resets run)
    assert set(row['shares']) == {label for label, _, _ in PHASES} and row['vector_step_ms'] > 0
    shares = row['shares']
    # (the Jetbot's action repeat is one recorded physics call, its task's pass run over it after:
    # no world.step and no terms.step, once NEXT_STEP's step that only starts episodes runs no
    # physics; everything else the step and its resets do takes time)
    recorded = {'physics (world.step)', 'tasks, rewards, metrics (terms.step)'}
    assert all(0 <= shares[label] < 1 for label, _, _ in PHASES)
    assert all(0 < shares[label] for label, _, _ in PHASES if label not in recorded)
    assert shares['resets (starts.reset: placed, started, the first observation)'] >= shares['  of which placed and started (starts._reset_taken)']
    # (each part inside the one it is listed under)
    assert shares['episodes taken and checked for resets (starts.take)'] >= shares['  of which the next episodes drawn (queue.next)']
    assert shares['  of which placed and started (starts._reset_taken)'] >= shares['    of which their start states written (starts.place)']
    finish = shares['episode ends and their records (runner.ends.finish)']
    assert finish >= shares['  of which their metrics (terms.episode_metrics)']
    assert finish >= shares['  of which their records written (results.write)']


def test_the_switch_ab_turns_each_switch_per_block() -> None:
    from internutopia.bench.switch_ab import _switch_ab, measure_switch_ab

    row = _switch_ab('internutopia/H1Walk-v0', 'fuse_steps', 2, 2, 3)
    assert row['physics_calls_per_vector_step_off'] == 4.0  # (four physics steps an action)
    assert row['physics_calls_per_vector_step_on'] == 1.0
    assert row['on_over_off'] > 0 and 0 < row['physics_share_on'] < 1
    row = _switch_ab('internutopia/H1Walk-v0', 'defer_forward', 2, 2, 3)
    assert row['switch'] == 'defer_forward' and row['physics_calls_per_vector_step_on'] == 1.0  # (the physics alike)
    assert row['on_over_off'] > 0
    row = _switch_ab('internutopia/H1Walk-v0', 'one_pass', 2, 2, 3)
    assert row['switch'] == 'one_pass' and row['physics_calls_per_vector_step_on'] == 1.0 and row['on_over_off'] > 0
    with pytest.raises(ValueError, match="no task of this env has a one_pass switch \\(its tasks: \\['PointNavTask'\\]\\)"):
        _switch_ab('internutopia/JetbotPointNav-v0', 'one_pass', 2, 1, 1)
    with pytest.raises(ValueError, match="unknown switch 'fuse'; valid switches: \\['defer_forward', 'fuse_steps', 'one_pass'\\]"):
        measure_switch_ab('internutopia/H1Walk-v0', 2, 'fuse')


def test_after_physics_times_each_piece_back_to_back_and_after_each_gap() -> None:
    from internutopia.bench.after_physics import GAPS, _after_physics, markdown_table

    result = _after_physics('internutopia/H1Walk-v0', 2, 3)
    assert [row['piece'] for row in result['rows']] == ['walker state', 'locomotion payment', 'read 30 attributes']
    for row in result['rows']:
        assert row['back_to_back_us'] > 0 and all(row[f'after {gap} us'] > 0 for gap in GAPS)
    table = markdown_table(result).splitlines()
    assert len(table) == 5 and table[2].startswith('| walker state |')
    with pytest.raises(ValueError, match='runs no locomotion task; use a walking id'):
        _after_physics('internutopia/JetbotPointNav-v0', 2, 3)


def test_gap_lengths_times_the_read_after_each_busy_loop() -> None:
    from internutopia.bench.after_physics import GAP_LENGTHS_MS, gap_lengths

    rows = gap_lengths(calls=3)
    assert [row['gap_ms'] for row in rows] == list(GAP_LENGTHS_MS)
    assert all(0 < row['median_us'] <= row['p90_us'] and 0 <= row['share_above_10_us'] <= 1 for row in rows)


def test_episodes_restarted_on_a_rounds_first_vector_step_are_replayed_from_their_start() -> None:
    """Episodes that end on a round's last vector step restart on the next round's first
    (NEXT_STEP autoreset), before that round's first physics call: the replay writes their start
    states too and ends where ours did (it used to go on from the ended episodes' states)."""
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=3, max_steps=12)
    world = env.unwrapped._vec.runner.world
    env.reset(seed=1)
    limit = GymLimit(world)
    rng = np.random.default_rng(0)
    rounds = []
    for _ in range(4):
        limit.start_round()
        ended = []
        for _ in range(2):
            _, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
            ended.append(bool(np.any(terminated | truncated)))
            limit.end_vector_step()
        (part,) = limit.parts
        ours = part.after.copy()
        first_written = part.steps[0][1].tolist()
        limit.replay_steps()
        rounds.append((ended, first_written))
        np.testing.assert_array_equal(part.batch.state[:, part.motion], ours)
    # (a 12-physics-step episode is two vector steps of six; the step after its end only starts
    # the next one, and the physics call after that is the next round's first)
    assert rounds[0] == ([False, True], []) and rounds[1] == ([False, False], [0, 1, 2])
    limit.close()
    env.close()


def test_a_walking_ids_policy_keeps_its_robots_up_where_random_actions_fell_them() -> None:
    """``--actions policy`` steps a walking id as a trained policy would: the shipped network on
    the id's observation, so its robots walk for the episode instead of falling within a second."""
    from internutopia.bench.action_sources import action_source

    ended = {}
    for kind in ('random', 'policy'):
        env = gym.make_vec('internutopia/H1Walk-v0', num_envs=4)
        obs, _ = env.reset(seed=0)
        source = action_source(kind, env, 'internutopia/H1Walk-v0', obs, warm_steps=0)
        fell = 0
        for _ in range(100):  # (2 s of walking)
            source.prepare()
            obs, _, terminated, _, _ = env.step(source.action)
            source.observe(obs)
            fell += int(np.count_nonzero(terminated))
        ended[kind] = fell
        (h1,) = env.unwrapped.vec_env.runner.robot_groups.values()
        height = h1.poses(np.arange(4))[0][:, 2]
        env.close()
    assert ended['random'] >= 4  # (the robots fell: four episodes or more ended)
    assert ended['policy'] == 0 and bool(np.all(height > 0.8))  # (all four still up, pelvis about 1 m high)


def test_the_policy_actions_need_a_walking_id(capsys: pytest.CaptureFixture[str]) -> None:
    from internutopia.bench.action_sources import action_source, policy_ids

    assert policy_ids() == ['internutopia/AliengoWalk-v0', 'internutopia/GR1Walk-v0', 'internutopia/H1Walk-v0']
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=1)
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"'internutopia/JetbotPointNav-v0' has none \(walking ids: \['internutopia/AliengoWalk-v0'"):
        action_source('policy', env, 'internutopia/JetbotPointNav-v0', obs, 0)
    with pytest.raises(ValueError, match=r"actions must be one of \['random', 'policy'\]; got 'zero'"):
        action_source('zero', env, 'internutopia/JetbotPointNav-v0', obs, 0)
    env.close()
    with pytest.raises(SystemExit):
        main(['--actions', 'policy', '--ids', 'internutopia/H1Walk-v0,internutopia/JetbotPointNav-v0'])
    assert "['internutopia/JetbotPointNav-v0'] have none (walking ids:" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(['--actions', 'policy', '--ids', 'internutopia/H1Walk-v0', '--ab', 'fuse_steps'])
    assert '--ab steps with random actions' in capsys.readouterr().err


def test_phases_with_the_policys_actions_leave_the_policy_out() -> None:
    from internutopia.bench.gym_step import _phases

    row = _phases('internutopia/H1Walk-v0', 2, 5, {}, 'policy')
    assert row['actions'] == 'policy' and row['vector_step_ms'] > 0
    assert 0 < row['shares']['physics (world.step)'] < 1
