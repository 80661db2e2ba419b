"""Every walking robot's gait and reward functions give what they gave when each robot had its own
copy (``tests/data/locomotion_golden.npz``, recorded from those copies on seeded random inputs):
the shipped policies and a running training read this observation layout and these rewards.
Bit for bit on the machine that recorded them; elsewhere numpy's sin, cos and exp may pick other
SIMD kernels, so floats may differ by an ulp or two (never a column moved or a sign flipped).

Re-record only on purpose (a new observation layout means retraining):
``python tests/test_locomotion_gait.py`` rewrites the file.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).parent / 'data' / 'locomotion_golden.npz'
ROBOTS = ('h1', 'aliengo', 'gr1')
#: Rows of the random inputs.
ROWS = 16
#: The gait constants the walker, the tick kernel and the trainer read.
CONSTANTS = ('LEG_STANDING', 'ACTION_SCALE', 'COMMAND_LOW', 'COMMAND_HIGH', 'COMMAND_RATE', 'COMMAND_SCALE', 'LEG_MIRROR_INDEX',
             'LEG_MIRROR_SIGN', 'OBS_MIRROR_INDEX', 'OBS_MIRROR_SIGN', 'OBS_SIZE', 'ACTION_SIZE', 'CLOCK_COLUMN', 'CONTROL_DT',
             'PHYSICS_DT', 'GAIT_PERIOD', 'STANCE_FRACTION', 'STAND_COMMAND', 'LIN_VEL_SCALE', 'ANG_VEL_SCALE', 'JOINT_VEL_SCALE')


def _phases(rng: np.random.Generator) -> np.ndarray:
    """Gait phases with the edge cases: stopped (0), just before and after the stance ends, wrapping."""
    phase = rng.uniform(0.0, 1.0, ROWS)
    phase[:8] = (0.0, 0.0, 0.05, 0.0499, 0.1, 0.5, 0.99, 0.55)
    return phase


def _commands(rng: np.random.Generator) -> np.ndarray:
    command = rng.uniform(-1.5, 1.5, (ROWS, 3))
    command[:4] = 0.0
    command[4] = (0.05, 0.0, 0.05)  # below the stand threshold
    return command


def outputs(robot: str) -> dict[str, np.ndarray]:
    """Each gait function's and reward term's output for ``robot`` on seeded random inputs, by name."""
    from internutopia_extension.robots.h1_locomotion.walker import WalkState

    gait = importlib.import_module(f'internutopia_extension.robots.{robot}_locomotion.gait')
    rewards = importlib.import_module(f'internutopia_extension.robots.{robot}_locomotion.rewards')
    rng = np.random.default_rng(7)
    legs, feet = gait.ACTION_SIZE, 4 if robot == 'aliengo' else 2
    quat = rng.normal(size=(ROWS, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat[0] = (1.0, 0.0, 0.0, 0.0)
    phase, command, moving = _phases(rng), _commands(rng), rng.random(ROWS) < 0.5
    lin_vel, ang_vel, vector = rng.normal(size=(ROWS, 3)), rng.normal(size=(ROWS, 3)), rng.normal(size=(ROWS, 3))
    leg_q, leg_dq, last_action = rng.normal(size=(ROWS, legs)), rng.normal(size=(ROWS, legs)) * 5, rng.uniform(-1, 1, (ROWS, legs))
    action = rng.uniform(-1.5, 1.5, (ROWS, legs))
    obs = gait.observe(quat, lin_vel, ang_vel, leg_q, leg_dq, last_action, command, phase)
    running = gait.clock_running(phase, command)
    result = {name: np.asarray(getattr(gait, name)) for name in CONSTANTS}
    result.update({
        'observe': obs,
        'mirror_observation': gait.mirror_observation(obs),
        'mirror_observation_f64': gait.mirror_observation(obs.astype(np.float64)),
        'mirror_action': gait.mirror_action(action),
        'ramp_command': gait.ramp_command(command, rng.uniform(-3, 3, (ROWS, 3))),
        'clock_running': running,
        'advance_phase': gait.advance_phase(phase, moving),
        'expected_stance': gait.expected_stance(phase, running),
        'leg_targets': gait.leg_targets(action),
        'projected_gravity': gait.projected_gravity(quat),
        'to_body': gait.to_body(quat, vector),
        'phase_signal': gait.phase_signal(phase),
        'action_scale': gait.action_scale(gait.ACTION_SCALE_BY_KIND),
    })
    state = WalkState(height=rng.uniform(0.1, 1.2, ROWS), gravity=gait.projected_gravity(quat), lin_vel=lin_vel, ang_vel=ang_vel,
                      leg_q=leg_q, leg_dq=leg_dq, action=action, last_action=last_action, command=command,
                      stance=rng.random((ROWS, feet)) < 0.5, moving=moving, touch=rng.uniform(0, 20, (ROWS, feet)),
                      foot_height=rng.uniform(0, 0.2, (ROWS, feet)), foot_speed=rng.uniform(0, 1, (ROWS, feet)),
                      foot_lateral=rng.normal(size=(ROWS, feet)) * 0.2)
    result['fallen'] = rewards.fallen(state)
    result.update({f'term_{name}': value for name, value in rewards.reward_terms(state).items()})
    result['reward_scales'] = np.array([rewards.REWARD_SCALES[name] for name in sorted(rewards.REWARD_SCALES)])
    result['reward_scale_names'] = np.array(sorted(rewards.REWARD_SCALES))
    result['once_terms'] = np.array(rewards.ONCE_TERMS)
    return result


@pytest.mark.parametrize('robot', ROBOTS)
def test_the_gait_and_rewards_are_bit_for_bit_the_recorded_ones(robot):
    with np.load(GOLDEN) as golden:
        recorded = {key.split('/', 1)[1]: golden[key] for key in golden.files if key.startswith(f'{robot}/')}
    now = outputs(robot)
    assert sorted(now) == sorted(recorded)
    for name, value in now.items():
        assert value.dtype == recorded[name].dtype and value.shape == recorded[name].shape, name
        if value.dtype.kind == 'f':
            np.testing.assert_array_max_ulp(value, recorded[name], maxulp=4, dtype=value.dtype)
        else:
            assert np.array_equal(value, recorded[name]), name


def test_the_recorded_inputs_reach_both_branches_of_the_clock():
    """The golden inputs are worth comparing on: clocks stopping and running, feet up and down."""
    with np.load(GOLDEN) as golden:
        for robot in ROBOTS:
            advanced, stance = golden[f'{robot}/advance_phase'], golden[f'{robot}/expected_stance']
            assert np.any(advanced == 0.0) and np.any(advanced > 0.0), robot
            assert stance.any() and not stance.all(), robot
            assert np.any(golden[f'{robot}/fallen']) and not np.all(golden[f'{robot}/fallen']), robot


if __name__ == '__main__':
    np.savez_compressed(GOLDEN, **{f'{robot}/{name}': value for robot in ROBOTS for name, value in outputs(robot).items()})
    print(f'wrote {GOLDEN}')
