"""Reliability: bad input never gets in, faults end only their own episode, nothing is lost.

Each test checks one promise of docs/reliability.md.
"""

from __future__ import annotations

import pytest

from internutopia.core.util import memory
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.h1 import H1RobotCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def jetbot_task(max_steps: int = 5, **kw) -> FiniteStepTaskCfg:
    return FiniteStepTaskCfg(max_steps=max_steps, robots=[JetbotRobotCfg(**kw)])


# ------------------------------------------------------------------------------------------------
# memory: an env_num this machine cannot hold is refused before it is allocated
def test_an_env_num_beyond_the_machine_is_refused_naming_the_memory(make_config):
    with pytest.raises(ValueError, match=r'env_num=1000000000000 needs about \d+.* GiB .* available'):
        Env(make_config([jetbot_task()], env_num=10 ** 12))


def test_a_structure_too_big_for_the_memory_left_changes_nothing(make_config, monkeypatch):
    # Pretend 60 MB are free: the runner's bookkeeping for 100k slots fits, an H1 pack does not.
    monkeypatch.setattr(memory, 'available_bytes', lambda: 60 * 2 ** 20)
    with Env(make_config([FiniteStepTaskCfg(robots=[H1RobotCfg()])], env_num=100_000)) as env:
        with pytest.raises(ValueError, match='env_num=100000 needs about .* physics state'):
            env.reset([0])
        assert len(env.runner.queue) == 1 and env.active_slots == []
