"""``step_arrays(reset_list=...)``: the slots whose episodes ended start their next ones in the
step's own call, observed in the same pass as the step's slots.

What a user sees must be what a step followed by ``reset_arrays`` gives: the same observations,
rewards and flags, the same episodes in the same slots, the same records; and a ``reset_list``
that names a running slot, or a bad id, changes nothing.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from internutopia.core.grid import slot_origins  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, jetbot_camera_cfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg  # noqa: E402


def _tasks(count: int = 9, camera: bool = False) -> list[FiniteStepTaskCfg]:
    # Episodes of different lengths: slots end on different steps, one or two at a time.
    sensors = [jetbot_camera_cfg.update(resolution=(32, 24))] if camera else None
    return [FiniteStepTaskCfg(max_steps=3 + (k * 5) % 7, robots=[JetbotRobotCfg(position=(0.1 * k, 0.0, 0.05), sensors=sensors)])
            for k in range(count)]


def _drive(env_num: int) -> dict:
    speeds = np.linspace(0.1, 0.4, env_num)
    return {'jetbot': {'move_by_speed': np.stack([speeds, np.zeros(env_num)], axis=1)}}


def _leaves(tree: dict, prefix: str = '') -> dict[str, np.ndarray]:
    """The arrays of an observation tree by path (copies)."""
    out: dict[str, np.ndarray] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_leaves(value, f'{prefix}{key}.'))
        else:
            out[prefix + key] = np.array(value)
    return out


def _records(path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != 'wall_time_s'} for line in path.read_text().splitlines()]


# (with a camera, the step's images come before the new episodes appear; with an action repeat,
# episodes end on inner steps too, and on some steps every running one ends before the last)
@pytest.mark.parametrize(('camera', 'repeat'), [(False, 1), (True, 1), (False, 3)])
def test_a_step_with_reset_list_equals_a_step_then_reset_arrays(make_config, tmp_path, camera, repeat):
    paths = [tmp_path / 'two_calls.jsonl', tmp_path / 'one_call.jsonl']
    # (1 m apart: a slot's camera sees its neighbours, so the order of images and new episodes shows)
    envs = [Env(make_config(_tasks(camera=camera), env_num=3, offset=1.0, metrics_save_path=str(path))) for path in paths]
    try:
        for env in envs:
            env.reset_arrays()
        ended: list[int] = []
        started_in_step = 0
        for _ in range(40):
            two = envs[0].step_arrays(_drive(3), repeat=repeat)
            two_obs = _leaves(two.obs)
            if ended:  # the twin: a step, then a reset of the slots that had ended
                first, configs = envs[0].reset_arrays(ended)
                new = [slot for slot, config in zip(ended, configs, strict=True) if config is not None]
                if new:
                    first_obs = _leaves(first)
                    for key, value in two_obs.items():
                        value[new] = first_obs[key][new]
            else:
                configs, new = None, []
            one = (envs[1].step_arrays(_drive(3), repeat=repeat, reset_list=ended) if ended
                   else envs[1].step_arrays(_drive(3), repeat=repeat))
            assert (one.started is None) == (configs is None)
            if configs is not None:
                assert one.started == configs and len(one.started) == len(ended)
                started_in_step += sum(c is not None for c in configs)
            rows = np.flatnonzero(two.active | np.isin(np.arange(3), new))
            one_obs = _leaves(one.obs)
            assert one_obs.keys() == two_obs.keys()
            for key, value in two_obs.items():
                np.testing.assert_array_equal(one_obs[key][rows], value[rows], err_msg=key)
            for name in ('reward', 'terminated', 'truncated', 'active'):
                np.testing.assert_array_equal(getattr(one, name), getattr(two, name), err_msg=name)
            assert envs[1].active_slots == envs[0].active_slots
            ended = np.flatnonzero(one.terminated | one.truncated).tolist()
            if envs[0].finished:
                break
        assert envs[1].finished and started_in_step >= 5
    finally:
        for env in envs:
            env.close()
    assert _records(paths[1]) == _records(paths[0]) and len(_records(paths[0])) == 9


def test_a_started_slot_observed_with_the_step_sees_its_start_pose(make_config):
    with Env(make_config(_tasks(4), env_num=2)) as env:
        env.reset_arrays()
        ended = []
        while not ended:
            out = env.step_arrays(_drive(2))
            ended = np.flatnonzero(out.truncated).tolist()
        final = out.obs['jetbot']['position'].copy()
        out = env.step_arrays(_drive(2), reset_list=ended)
        slot, config = ended[0], out.started[0]
        # The new episode's robot stands where its config puts it in its slot (the slot's grid
        # origin plus the config's position), not where the old one drove to.
        expected = slot_origins(2, 5.0)[slot][:2] + np.asarray(config.robots[0].position[:2])
        np.testing.assert_allclose(out.obs['jetbot']['position'][slot][:2], expected, atol=1e-3)
        assert np.linalg.norm(out.obs['jetbot']['position'][slot][:2] - final[slot][:2]) > 0.1  # (the old robot's last pose)
        assert not out.active[slot] and out.reward[slot] == 0.0
        assert env.active_slots == [0, 1]


@pytest.mark.parametrize('kind', ['running', 'out of range', 'repeated'])
def test_a_bad_reset_list_is_refused_before_anything_moves(make_config, kind):
    with Env(make_config(_tasks(4), env_num=2)) as env:
        env.reset_arrays()
        out = None
        while out is None or not out.truncated.any():
            out = env.step_arrays(_drive(2))
        ended, running = int(np.flatnonzero(out.truncated)[0]), int(np.flatnonzero(~out.truncated)[0])
        reset_list, match = {'running': ([ended, running], rf'env\(s\) \[{running}\] are running episodes'),
                             'out of range': ([ended, 5], r'0\.\.1'), 'repeated': ([ended, ended], 'reset_list')}[kind]
        before = [env.runner.world.slot_state(slot) for slot in (0, 1)]
        steps = env.runner.table.steps.copy()
        queued = len(env.runner.queue)
        with pytest.raises(ValueError, match=match):
            env.step_arrays(_drive(2), reset_list=reset_list)
        for slot in (0, 1):
            for key, value in env.runner.world.slot_state(slot).items():
                np.testing.assert_array_equal(value, before[slot][key])
        np.testing.assert_array_equal(env.runner.table.steps, steps)
        assert len(env.runner.queue) == queued and env.active_slots == [running]


def test_the_contracts_autoreset_loop_runs_every_episode():
    import os
    import re

    path = os.path.join(os.path.dirname(__file__), '..', 'docs', 'contract.md')
    with open(path, encoding='utf-8') as stream:
        blocks = re.findall(r'^```python\n(.*?)^```', stream.read(), flags=re.S | re.M)
    loop = next(block for block in blocks if 'reset_list=ended' in block)
    namespace: dict = {}
    exec(compile(loop, 'docs/contract.md (the autoreset loop)', 'exec'), namespace)  # noqa: S102 - the docs' own example
    assert namespace['episodes'] == 6  # every episode of the queue ran to its end
