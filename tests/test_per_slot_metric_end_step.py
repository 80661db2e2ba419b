"""An upstream-style (per-slot) metric and reward skip the step their episode ends on, under any task.

InternUtopia 2.2.1's ``SimulatorRunner.step``: once a task's ``is_done()`` is true it calls the
task's ``calculate_metrics()`` and neither its metrics' ``update(obs)`` nor its reward's ``calc()``
on that step (the reward there is -1; here 0.0, see docs/compatibility.md). So an episode that
ends on step 4 saw 3 updates and the rewards ``[1, 1, 1, 0]``. The same holds whether the task is
upstream-style (``is_done()``) or one of this package's vectorized tasks (``FiniteStepTask``,
``PointNavTask``: terminated or truncated), through ``env.step``, ``step_arrays`` and an action
repeat (``step_arrays(repeat=N)``).
"""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import MetricCfg, TaskCfg
from internutopia.core.config.task import RewardCfg
from internutopia.core.task import BaseTask
from internutopia.core.task.metric import BaseMetric
from internutopia.core.task.reward import BaseReward
from internutopia.core.vec_env import Env
from internutopia_extension.configs.metrics import SPLMetricCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, PointNavTaskCfg


@BaseMetric.register('EndStepCountMetric')
class EndStepCountMetric(BaseMetric):
    """InternNav's way: counts its ``update(obs)`` calls."""

    def __init__(self, config, task_config):
        super().__init__(config, task_config)
        self.n = 0

    def update(self, obs):
        assert 'jetbot' in obs  # (the slot's task observations)
        self.n += 1

    def calc(self):
        return self.n


@BaseReward.register('EndStepOneReward')
class EndStepOneReward(BaseReward):
    """InternUtopia's way: 1.0 on every step it is asked."""

    def reset(self):
        self.state = None

    def calc(self):
        return 1.0

    def _calc_next_state(self):
        pass


class EndStepTaskCfg(TaskCfg):
    type: str = 'EndStepTask'
    max_steps: int = 4


@BaseTask.register('EndStepTask')
class EndStepTask(BaseTask):
    """Upstream-style: ``is_done()`` on its ``max_steps``-th step (as upstream's FiniteStepTask)."""

    def __init__(self, config, scene):
        super().__init__(config, scene)
        self.count = 0

    def is_done(self):
        self.count += 1
        return self.count >= self.config.max_steps


METRICS = [MetricCfg(type='EndStepCountMetric', name='updates')]
REWARD = RewardCfg(reward_type='EndStepOneReward')


def task(kind: str, max_steps: int) -> TaskCfg:
    common = {'robots': [JetbotRobotCfg()], 'reward': REWARD}
    if kind == 'upstream':
        return EndStepTaskCfg(max_steps=max_steps, metrics=METRICS, **common)
    if kind == 'finite':
        return FiniteStepTaskCfg(max_steps=max_steps, metrics=METRICS, **common)
    # (a goal out of reach: truncated at max_steps; SPL makes PointNavTask run its combined step, the
    # per-slot metric and reward then run apart)
    return PointNavTaskCfg(goal=(50.0, 0.0, 0.0), max_steps=max_steps, metrics=[SPLMetricCfg(), *METRICS], **common)


KINDS = ['upstream', 'finite', 'point_nav']
VECTORIZED = KINDS[1:]  # (step_arrays takes no upstream-style task: its observations are per-slot dicts)
#: Two slots, ending on steps 4 and 6: 3 and 5 updates, and a reward of 1 on every step but the last.
MAX_STEPS = (4, 6)
EXPECTED_REWARDS = [[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]]
EXPECTED_UPDATES = [3, 5]


@pytest.fixture
def env(make_config, request):
    with Env(make_config([task(request.param, n) for n in MAX_STEPS], env_num=2)) as made:
        made.reset()
        yield made


@pytest.mark.parametrize('env', KINDS, indirect=True)
def test_dict_step(env):
    rewards: list[list[float]] = [[], []]
    updates: dict[int, int] = {}
    for _ in range(10):
        _, reward, terminated, truncated, info = env.step([{}, {}])
        for slot in (0, 1):
            if slot in updates:
                continue
            rewards[slot].append(float(reward[slot]))
            if terminated[slot] or truncated[slot]:
                updates[slot] = info[slot]['metrics']['updates']
        if len(updates) == 2:
            break
    assert rewards == EXPECTED_REWARDS
    assert [updates[0], updates[1]] == EXPECTED_UPDATES


@pytest.mark.parametrize('env', VECTORIZED, indirect=True)
def test_step_arrays(env):
    rewards: list[list[float]] = [[], []]
    updates: dict[int, int] = {}
    for _ in range(10):
        out = env.step_arrays({})
        ended = out.terminated | out.truncated
        for slot in (0, 1):
            if slot in updates:
                continue
            rewards[slot].append(float(out.reward[slot]))
            if ended[slot]:
                updates[slot] = out.metrics[slot]['updates']
        if len(updates) == 2:
            break
    assert rewards == EXPECTED_REWARDS
    assert [updates[0], updates[1]] == EXPECTED_UPDATES


@pytest.mark.parametrize('env', VECTORIZED, indirect=True)
def test_step_arrays_repeat(env):
    """An action repeat of 3: steps 1-3 (every reward 1), then 4-6, slot 0 ending on step 4 (its
    reward 0: nothing from it), slot 1 on step 6 (1 + 1 + 0)."""
    first = env.step_arrays({}, repeat=3)
    assert first.reward.tolist() == [3.0, 3.0] and not (first.terminated | first.truncated).any()
    second = env.step_arrays({}, repeat=3)
    assert (second.terminated | second.truncated).tolist() == [True, True]
    np.testing.assert_array_equal(second.reward, [0.0, 2.0])
    assert [second.metrics[0]['updates'], second.metrics[1]['updates']] == EXPECTED_UPDATES
