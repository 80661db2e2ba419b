"""``Terms.members_of``: the slots each task, reward and metric serves, asked several times per
step, is kept between steps and follows every episode that starts or leaves."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def test_served_slots_are_kept_between_steps_and_follow_starts_and_leaves(make_config) -> None:
    env = Env(make_config([FiniteStepTaskCfg(max_steps=50, robots=[JetbotRobotCfg()])] * 4, env_num=2))
    env.reset()
    terms, table = env.runner.terms, env.runner.table
    (task,) = terms.tasks.values()
    active = table.active_slots()
    served = terms.members_of(task, active)
    assert served.tolist() == [0, 1] and terms.members_of(task, active) is served  # (kept)
    assert not served.flags.writeable  # (shared: nobody may change it in place)
    terms.leave(1)  # slot 1 leaves: the same active array now gets a new answer
    assert terms.members_of(task, active).tolist() == [0]
    asked = np.array([0, 1])  # a writable array may change between calls: answered anew each time
    assert terms.members_of(task, asked).tolist() == [0]
    asked[:] = [1, 1]
    assert terms.members_of(task, asked).tolist() == []
    env.reset([1])  # a new episode in slot 1
    active = table.active_slots()
    assert terms.members_of(task, active).tolist() == [0, 1]
    out = env.step_arrays({'jetbot': {'move_by_speed': np.zeros((2, 2))}})
    assert out.active.tolist() == [True, True]
    env.close()


def test_the_step_plan_follows_a_new_episode_with_another_reward(make_config) -> None:
    """``Terms.step`` keeps who runs (tasks, rewards, metrics and their slots) between steps of the
    same active slots; an episode that starts with another reward config is paid by that one."""
    from internutopia_extension.configs.tasks import PointNavProgressRewardCfg, PointNavTaskCfg

    def nav(penalty: float) -> PointNavTaskCfg:
        settings = {'scale': 0.0, 'success_bonus': 0.0, 'step_penalty': penalty}
        return PointNavTaskCfg(goal=(3.0, 0.0, 0.0), max_steps=500, robots=[JetbotRobotCfg()],
                               reward=PointNavProgressRewardCfg(reward_settings=settings))

    env = Env(make_config([nav(0.5), nav(0.5), nav(2.0)], env_num=2))
    still = {'jetbot': {'move_by_speed': np.zeros((2, 2))}}
    env.reset()
    for _ in range(3):
        assert env.step_arrays(still).reward.tolist() == [-0.5, -0.5]
    plan = env.runner.terms._last_plan
    assert plan is not None and plan[0] is env.runner.table.active_slots()  # (kept for the next step)
    env.reset([1])  # the third episode: a reward object of its own
    assert len(env.runner.terms.rewards) == 2
    for _ in range(3):
        assert env.step_arrays(still).reward.tolist() == [-0.5, -2.0]
    env.close()


def test_a_combined_step_covering_what_it_was_not_offered_is_refused_naming_the_task(make_config, monkeypatch) -> None:
    """``BaseTask.combined_step`` may cover only the rewards and metrics it is offered (those
    serving exactly its slots): covering another is the task class's error, named."""
    from internutopia.core.task.base import CombinedStep
    from internutopia_extension.configs.tasks import PointNavTaskCfg
    from internutopia_extension.tasks.point_nav import PointNavTask

    def greedy(self, rewards, metrics):
        return CombinedStep(self.step, rewards=(object(),))

    monkeypatch.setattr(PointNavTask, 'combined_step', greedy)
    env = Env(make_config([PointNavTaskCfg(goal=(3.0, 0.0, 0.0), robots=[JetbotRobotCfg()])] * 2, env_num=2))
    env.reset()
    try:
        with pytest.raises(ValueError, match=r'PointNavTask\.combined_step covers reward object\(s\) it was not offered'):
            env.step_arrays({'jetbot': {'move_by_speed': np.zeros((2, 2))}})
    finally:
        env.close()
