"""What H1Walk-v0's episode turnover costs: its plain loop with the robots' falls ending episodes
(the id as it is) and with falls not ending them (the one change), side by side in one run.

    python docs/assets/h1walk_without_falls_session18.py fall
    python docs/assets/h1walk_without_falls_session18.py no-falls

64 envs, random leg actions (50 drawn once, in turn), 200 vector steps to warm up, then three
blocks of 1,500: each block's time per vector step, the share of it inside ``MujocoWorld.step``
and the episodes ended per vector step. (Recorded in docs/performance.md, eighteenth session.)
"""

import sys
import time

import gymnasium as gym

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.core.backend.mujoco import world as mujoco_world
from internutopia_extension.tasks import locomotion

mode = sys.argv[1] if len(sys.argv) > 1 else 'fall'
if mode == 'no-falls':
    start_row = locomotion.LocomotionTask._start_row

    def start_row_without_falls(self, slot, *args, **kwargs):
        start_row(self, slot, *args, **kwargs)
        self.end_on_fall[slot] = False

    locomotion.LocomotionTask._start_row = start_row_without_falls
physics = [0.0]
world_step = mujoco_world.MujocoWorld.step


def timed_step(self, *args, **kwargs):
    began = time.perf_counter()
    try:
        return world_step(self, *args, **kwargs)
    finally:
        physics[0] += time.perf_counter() - began


mujoco_world.MujocoWorld.step = timed_step
envs = gym.make_vec('internutopia/H1Walk-v0', num_envs=64)
envs.reset(seed=0)
actions = [envs.action_space.sample() for _ in range(50)]
for i in range(200):
    envs.step(actions[i % 50])
for _ in range(3):
    physics[0], ended, began = 0.0, 0, time.perf_counter()
    for i in range(1500):
        _, _, terminated, truncated, _ = envs.step(actions[i % 50])
        ended += int((terminated | truncated).sum())
    elapsed = time.perf_counter() - began
    print(f'{mode}: {elapsed / 1500 * 1e6:.0f} us a vector step, physics share {physics[0] / elapsed:.3f}, '
          f'outside the physics {(elapsed - physics[0]) / 1500 * 1e6:.0f} us, {ended / 1500:.2f} episodes ended a vector step')
envs.close()
