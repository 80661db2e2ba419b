"""Parked packs (batches of structures no slot holds any more, kept for reuse) stay within their
budget: a run whose every episode brings a structure of its own frees the least recently parked
batches, and the process's resident memory stops growing once the budget is full.

Before, a parked pack was counted as its slots' state alone (3 kB for a Jetbot and a cube, while
the pack held about 1.2 MB: the model buffer and the threads' stacks), so the parked packs were
never freed and the memory grew by about 1.3 MB per structure without bound.
"""

from __future__ import annotations

from internutopia.core.backend.mujoco import world as mujoco_world
from internutopia.core.backend.mujoco.footprint import pack_bytes
from internutopia.core.config import Config
from internutopia.core.vec_env import Env
from internutopia_extension.configs.objects import DynamicCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from tests.test_soak import held_mb

EPISODES = 300
ENV_NUM = 2
#: Episode by which the parked budget is nearly full (a pack of these structures: about 1.2 MB).
WARM = 50
#: Allowed growth of the resident memory from episode WARM to the end (measured: about 23 MB
#: with the fix, about 320 MB before it, when the parked packs were never freed).
MAX_GROWTH_MB = 40.0


def episode(i: int) -> FiniteStepTaskCfg:
    """A one-step episode whose cube's size, hence its structure, is its own."""
    size = 0.1 + i * 1e-4
    return FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()],
                             objects=[DynamicCubeCfg(name='box', position=(1.0, 0.0, 0.3), scale=(size, size, size))])


def test_parked_packs_of_many_structures_stay_within_their_budget():
    env = Env(Config(env_num=ENV_NUM, metrics_save_path='none', task_configs=[episode(0)]),
              episodes=(episode(i) for i in range(EPISODES)))
    try:
        world = env.runner.world
        env.reset()
        done = 0
        most_parked = 0
        smallest = float('inf')
        warm_mb = None
        while not env.finished:
            obs, _, terminated, _, _ = env.step([None] * ENV_NUM)
            ended = [i for i in range(ENV_NUM) if terminated[i] and obs[i] is not None]
            if ended:
                env.reset(ended)
            done += len(ended)
            parked = [pack_bytes(pack.model, world.env_num, world.threads) for pack in world._parked.values()]
            assert sum(parked) <= mujoco_world._PARKED_BYTES, (done, len(parked), sum(parked))
            most_parked = max(most_parked, len(parked))
            smallest = min([smallest, *parked])
            if warm_mb is None and done >= WARM:
                warm_mb = held_mb()
        growth = held_mb() - warm_mb
        print(f'parked at most {most_parked} packs (smallest {smallest / 2 ** 20:.2f} MB); '
              f'resident memory grew by {growth:.1f} MB from episode {WARM} to {done}')
        assert most_parked <= mujoco_world._PARKED_BYTES // smallest, most_parked
        assert most_parked >= 2  # (packs are parked at all: the budget keeps some)
        assert growth < MAX_GROWTH_MB, f'resident memory grew by {growth:.0f} MB from episode {WARM} to {done}'
    finally:
        env.close()
