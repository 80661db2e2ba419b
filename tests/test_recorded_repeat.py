"""An action repeat run as one recorded physics call (``internutopia.core.runner.recorded``): the
Jetbot point-nav env's six physics steps per action in one ``World.rollout``, its task's pass
over the record afterwards, with every result bit for bit the step-by-step path's (episodes that
end on an inner step, all of them at once, autoreset modes, a simulation that diverges)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import internutopia.envs  # noqa: F401  (registers the ids)
from tests.test_fused_steps import _same

#: Short episodes (not a multiple of the six-step repeat: time limits fall on inner steps) with
#: near goals (reached on inner steps too) and a wide goal radius.
_EPISODES = {'max_steps': 40, 'success_distance': 0.6, 'max_distance': 1.2}


def pack_states(runner) -> list[np.ndarray]:
    """A copy of every pack's batch state (each slot's time, qpos, qvel, ctrl, ...)."""
    return [pack.batch.state.copy() for pack in runner.world.packs.values()]


def _run(fuse: bool, vector_steps: int, mode: AutoresetMode = AutoresetMode.NEXT_STEP, before_step=None, num_envs: int = 6):
    """Every result of ``vector_steps`` vector steps driving forward (goals are reached), the
    batch's state at the end, and what the recorded calls did: (calls, episodes ended early)."""
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=num_envs, autoreset_mode=mode, **_EPISODES)
    runner = env.unwrapped._vec.runner
    runner.fuse_steps = fuse
    recorded = {'calls': 0, 'early': 0}
    advance = runner.recorded.advance

    def counted(*args):
        done = advance(*args)
        if done is not None:
            recorded['calls'] += 1
            recorded['early'] += len(done[1])
        return done

    runner.recorded.advance = counted
    results = [env.reset(seed=2)]
    rng = np.random.default_rng(4)
    for k in range(vector_steps):
        if before_step is not None:
            before_step(k, runner)
        actions = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
        actions[:, 0] = np.abs(actions[:, 0])  # (forward: robots reach their goals)
        results.append(env.step(actions))
        results.append(pack_states(runner))  # (the state after each step: ended slots' too, before any reset)
        ended = results[-2][2] | results[-2][3]
        if mode == AutoresetMode.DISABLED and ended.any():
            results.append(env.reset(options={'reset_mask': ended}))
    state = next(iter(runner.world.packs.values())).batch.state.copy()
    world = (runner.world.time, runner.world_steps, runner.table.steps.copy())
    env.close()
    return results, state, world, recorded


@pytest.mark.parametrize('mode', [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_a_recorded_repeat_gives_the_step_by_step_results_bit_for_bit(mode):
    one_by_one, state_one, world_one, none = _run(False, 60, mode)
    recorded, state, world, calls = _run(True, 60, mode)
    assert none == {'calls': 0, 'early': 0}
    # (most vector steps: not those that follow one where every episode ended, which run none
    # until the ended ones restart after their physics step; many episodes ended on an inner step)
    assert calls['calls'] >= 45 and calls['early'] >= 10
    # observations, rewards, flags, infos with final observations and records, and the state after
    # each step (a slot that ended on an inner step ran on with its wheels stopped, as step by step)
    assert _same(one_by_one, recorded)
    np.testing.assert_array_equal(state, state_one)  # every slot's state, ended ones (rewound, then run on) included
    assert world[0] == world_one[0] and world[1] == world_one[1]  # the world clock and its physics steps
    np.testing.assert_array_equal(world[2], world_one[2])  # each episode's step count


def test_episodes_that_all_end_inside_a_repeat_stop_it_there_as_step_by_step():
    """Every episode starts together and ends on its 40th physics step, the fourth of a repeat:
    step by step the repeat stops there (no episode runs); the recorded call is cut back to it."""
    one_by_one, state_one, world_one, _ = _run(False, 8, num_envs=3)
    recorded, state, world, calls = _run(True, 8, num_envs=3)
    assert calls['calls'] == 7  # (the eighth runs no episode: they restart after its one physics step)
    assert _same(one_by_one, recorded)
    np.testing.assert_array_equal(state, state_one)
    assert world[:2] == world_one[:2] and world[1] < 8 * 6  # (fewer physics steps than six an action)


def test_a_simulation_that_diverges_in_a_repeat_makes_it_run_step_by_step():
    """A runaway velocity in env 1 makes MuJoCo warn (and reset that simulation) inside the
    recorded call, which stops it: every slot is put back and the repeat runs step by step, so
    env 1's episode ends as diverged on the step it blew up and no other env notices; the rest
    of the repeat runs as a recorded call again."""
    def blow_up(k, runner):
        if k == 3:
            pack = next(iter(runner.world.packs.values()))
            pack.data.qvel[1, 0] = 1e11  # (past mjMAXVAL: a bad-velocity warning on the next physics step)

    one_by_one, state_one, _, _ = _run(False, 6, before_step=blow_up)
    recorded, state, _, calls = _run(True, 6, before_step=blow_up)
    # (every vector step: the one that diverged runs its first physics step alone, where the
    # simulation blew up, and its other five in a recorded call again)
    assert calls['calls'] == 6
    assert _same(one_by_one, recorded)
    np.testing.assert_array_equal(state, state_one)
    info = recorded[7][4]  # (the fourth step's: reset, then (step, state) pairs)
    assert info['_diverged'][1] and info['diverged'][1] and not info['_diverged'][[0, 2, 3, 4, 5]].any()


def test_only_repeats_whose_inputs_and_tasks_allow_run_recorded():
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2)
    runner = env.unwrapped._vec.runner
    calls: list[int] = []
    step, rollout = runner.world.step, runner.world.rollout

    def counted_step(steps: int = 1) -> None:
        calls.append(steps)
        step(steps)

    def counted_rollout(steps: int, fields: tuple[str, ...]):
        calls.append(-steps)
        return rollout(steps, fields)

    runner.world.step, runner.world.rollout = counted_step, counted_rollout
    env.reset(seed=0)
    env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    assert calls == [-6]  # the point-nav task reads the record: one recorded call an action
    runner.fuse_steps = False
    calls.clear()
    env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    assert calls == [1] * 6  # (off: step by step, as before)
    env.close()
    walk = gym.make_vec('internutopia/H1Walk-v0', num_envs=2)  # the walking task has no recorded pass
    walk_runner = walk.unwrapped._vec.runner
    walk.reset(seed=0)
    assert walk_runner.terms.recorded_pass(walk_runner.table.active_slots()) is None
    walk.close()


def _jetbot_world(num_envs: int):
    """A Jetbot point-nav vector env after its reset, its world and the world's one pack."""
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=num_envs)
    world = env.unwrapped._vec.runner.world
    env.reset(seed=1)
    return env, world, next(iter(world.packs.values()))


def test_the_worlds_rollout_is_its_steps_bit_for_bit_and_rewinds_a_slot_to_any_step():
    env, world, pack = _jetbot_world(4)
    pack.data.ctrl[:, :] = [[5.0, 8.0], [-3.0, 4.0], [6.0, 6.0], [0.0, -7.0]]
    start, time_before = pack.batch.state.copy(), world.time
    done = world.rollout(5, ('qpos',))
    assert done is not None and done.fields['qpos'].shape == (4, 5, pack.model.nq)
    after, sensors = pack.batch.state.copy(), pack.data.sensordata.copy()
    pack.batch.state[:] = start
    states = []
    for _ in range(5):
        pack.batch.step(None, nstep=1)
        states.append(pack.batch.state.copy())
    np.testing.assert_array_equal(after, states[-1])
    np.testing.assert_array_equal(sensors, pack.data.sensordata)  # (derived fields too)
    qpos_columns = slice(1, 1 + pack.model.nq)  # (time, then qpos, in a state row)
    for k in range(5):
        np.testing.assert_array_equal(done.fields['qpos'][:, k], states[k][:, qpos_columns])
    pack.batch.state[:] = after
    done.rewind(np.array([2]), 3)
    np.testing.assert_array_equal(pack.batch.state[2], states[2][2])  # env 2 back after step 3
    np.testing.assert_array_equal(pack.batch.state[[0, 1, 3]], after[[0, 1, 3]])  # the others as the call left them
    done.step(np.array([2]), 2)
    np.testing.assert_array_equal(pack.batch.state[2], after[2])
    assert world.time > time_before
    done.stop_at(2)  # the call cut back after its second step: every slot and the clock
    np.testing.assert_array_equal(pack.batch.state, states[1])
    assert world.time == time_before + pack.model.opt.timestep + pack.model.opt.timestep
    env.close()


def test_a_warning_in_the_call_puts_every_slot_back():
    env, world, pack = _jetbot_world(3)
    pack.data.qvel[0, 0] = 1e11
    start, time_before = pack.batch.state.copy(), world.time
    assert world.rollout(4, ('qpos',)) is None
    np.testing.assert_array_equal(pack.batch.state, start)
    assert world.time == time_before
    world.step(1)  # (the usual step goes on: MuJoCo resets the simulation that blew up)
    assert world.failed_slots().tolist() == [0]
    env.close()


def test_a_world_of_several_packs_is_not_rolled_out():
    from internutopia.core.config import Config, SimConfig
    from internutopia.core.vec_env import Env
    from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

    robots = ('jetbot', 'h1')
    configs = [SingleInferenceTaskCfg(scene_asset_path='', robots=[_robot(name)]) for name in robots]
    env = Env(Config(simulator=SimConfig(), env_num=2, task_configs=configs))
    env.reset()
    world = env.runner.world
    assert len([pack for pack in world.packs.values() if len(pack.slots)]) == 2
    before = {key: pack.batch.state.copy() for key, pack in world.packs.items()}
    assert world.rollout(2, ('qpos',)) is None
    for key, pack in world.packs.items():
        np.testing.assert_array_equal(pack.batch.state, before[key])
    env.close()


def _robot(name: str):
    from internutopia_extension.configs.robots.h1 import H1RobotCfg
    from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg

    return JetbotRobotCfg(position=(0.0, 0.0, 0.0)) if name == 'jetbot' else H1RobotCfg(position=(0.0, 0.0, 1.05))




def test_a_recorded_pass_that_raises_is_named_and_the_physics_put_back(monkeypatch):
    from internutopia_extension.tasks.point_nav import PointNavTask

    def broken(self, slots, recorded, progress, spl):
        raise ZeroDivisionError('injected')

    monkeypatch.setattr(PointNavTask, '_recorded_pass', broken)
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=3)
    runner = env.unwrapped._vec.runner
    env.reset(seed=0)
    pack = next(iter(runner.world.packs.values()))
    state, clock, steps = pack.batch.state.copy(), runner.world.time, runner.table.steps.copy()
    with pytest.raises(RuntimeError, match=r'PointNavTask: its recorded pass .* envs \[0, 1, 2\].*ZeroDivisionError: injected'):
        env.step(np.ones(env.action_space.shape, dtype=np.float32))
    np.testing.assert_array_equal(pack.batch.state[:, :1 + pack.model.nq + pack.model.nv],
                                  state[:, :1 + pack.model.nq + pack.model.nv])  # time, qpos, qvel as before the step
    assert runner.world.time == clock
    np.testing.assert_array_equal(runner.table.steps, steps)
    env.close()


def test_a_pack_of_some_slots_records_and_rewinds_only_its_own():
    env, _, pack = _jetbot_world(4)
    pack.set_slots(np.array([0, 2, 3]))  # (slot 1 out of the pack, as an empty slot is)
    pack.data.ctrl[:, :] = [[5.0, 8.0], [9.0, 9.0], [6.0, 6.0], [0.0, -7.0]]
    start = pack.batch.state.copy()
    done = pack.rollout(3, ('qpos',))
    assert done is not None
    after = pack.batch.state.copy()
    np.testing.assert_array_equal(after[1], start[1])  # not stepped
    assert not done.fields['qpos'][1].any() and done.fields['qpos'][[0, 2, 3]].any()  # rows by slot; slot 1's empty
    np.testing.assert_array_equal(done.fields['qpos'][[0, 2, 3], -1], after[[0, 2, 3], 1:1 + pack.model.nq])
    done.rewind(np.array([3]), 1)
    pack.batch.state[[0, 2]] = start[[0, 2]]  # (the same first step for slot 3 alone, from the start)
    one = pack.batch.state.copy()
    one[3] = start[3]
    pack.batch.state[:] = one
    pack.batch.step(np.array([3]), nstep=1)
    np.testing.assert_array_equal(done.fields['qpos'][3, 0], pack.batch.state[3, 1:1 + pack.model.nq])
    env.close()


@pytest.mark.parametrize('env_id', ['internutopia/AliengoPointNav-v0', 'internutopia/GR1PointNav-v0',
                                    'internutopia/H1WithHandPointNav-v0', 'internutopia/G1PointNav-v0'])
def test_a_walking_robots_repeat_runs_recorded_from_tick_to_tick_bit_for_bit(env_id):
    """A walking robot's ``move_by_speed`` only stores its command (the policy reads it on its
    50 Hz ticks; G1's is the holosoma policy's): the four physics steps from one tick to the next are one recorded call,
    episodes that end between two ticks included, with every result and state bit for bit the
    step-by-step path's."""
    def run(fuse: bool):
        env = gym.make_vec(env_id, num_envs=4, max_steps=150, success_distance=0.6, max_distance=1.2)
        runner = env.unwrapped._vec.runner
        runner.fuse_steps = fuse
        calls: list[tuple[int, int]] = []  # (physics steps, episodes ended before the last) per recorded call
        advance = runner.recorded.advance

        def counted(*args):
            done = advance(*args)
            if done is not None:
                calls.append((done[0].steps, len(done[1])))
            return done

        runner.recorded.advance = counted
        results = [env.reset(seed=2)]
        rng = np.random.default_rng(4)
        for _ in range(30):
            actions = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
            actions[:, 0] = np.abs(actions[:, 0])
            results.append(env.step(actions))
            results.append(pack_states(runner))
        env.close()
        return results, calls

    one_by_one, none = run(False)
    recorded, calls = run(True)
    assert none == []
    assert _same(one_by_one, recorded)  # observations, rewards, flags, infos, records and every state after each step
    steps = [count for count, _ in calls]
    assert sum(steps) >= 0.8 * 30 * 20 and max(steps) == 4  # (20 physics steps an action: most of them in calls of 4)
    assert sum(early for _, early in calls) >= 4  # (episodes that ended between two ticks, their slots run on)


def test_metrics_that_raise_as_an_episode_ends_inside_a_recorded_repeat_fail_only_that_episode():
    """An episode that ends on an inner step of a recorded call and whose metrics raise there
    (injected into the terms' ``episode_metrics``): that env's episode fails with its error in
    the infos and the next starts; the other env's episode runs on and ends as its task says."""
    env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2, **_EPISODES)
    try:
        runner = env.unwrapped._vec.runner
        recorded = {'calls': 0}
        advance = runner.recorded.advance

        def counted(*args):
            done = advance(*args)
            recorded['calls'] += done is not None
            return done

        runner.recorded.advance = counted
        episode_metrics = runner.terms.episode_metrics
        raised = []

        def metrics(slot):
            if slot == 0 and not raised:
                raised.append(int(runner.table.steps[slot]))
                raise ZeroDivisionError('the metric divided by zero')
            return episode_metrics(slot)

        env.reset(seed=3)
        runner.terms.episode_metrics = metrics
        still = np.zeros(env.action_space.shape, dtype=np.float32)  # (standing still: episodes end by their time limit)
        infos = []
        for _ in range(8):
            _, _, terminated, truncated, info = env.step(still)
            infos.append((terminated.copy(), truncated.copy(), info))
        ended_at = [k for k, (t, u, _) in enumerate(infos) if t[0] or u[0]]
        assert raised == [40] and recorded['calls'] >= 6 and ended_at == [6]  # (40 steps: the 4th of the 7th repeat)
        terminated, truncated, info = infos[6]
        assert terminated.tolist() == [True, False] and truncated.tolist() == [False, True]  # (env 1: its time limit)
        assert info['failed'][0] == 'ZeroDivisionError: the metric divided by zero' and info['_failed'].tolist() == [True, False]
        assert info['metrics']['_success'].tolist() == [False, True]  # (env 0's metrics: none, they raised)
        assert info['steps'].tolist() == [40, 40]
        assert infos[7][2]['episode_index'].tolist() == [2, 3]  # (both envs took their next episodes)
    finally:
        env.close()
