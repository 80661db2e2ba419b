"""What Python's garbage collector costs a Gymnasium vector step: the collections that run during
a plain loop, by generation, and their time.

    python docs/assets/gc_session19.py internutopia/H1Walk-v0 6000
    python docs/assets/gc_session19.py internutopia/JetbotPointNav-v0 6000
    python docs/assets/gc_session19.py internutopia/H1Walk-v0 1500 64     # the walking sampler drawing 64 at a time

64 envs, random leg or wheel actions, warmed for 20 vector steps; ``gc.callbacks`` time each
collection. The third argument (H1Walk-v0 only) sets the walking sampler's batch (16 by default).
(Recorded in docs/performance.md, nineteenth session.)
"""

import gc
import sys
import time

import gymnasium as gym

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.bench.random_actions import warmed_random_actions

env_id = sys.argv[1] if len(sys.argv) > 1 else 'internutopia/H1Walk-v0'
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 6000
if len(sys.argv) > 3:
    from internutopia_extension.robots.h1_locomotion import episodes

    defaults = list(episodes.walk_sampler.__defaults__)
    defaults[0] = int(sys.argv[3])  # (batch)
    episodes.walk_sampler.__defaults__ = tuple(defaults)
env = gym.make_vec(env_id, num_envs=64)
env.reset(seed=0)
actions = warmed_random_actions(env, 20)
collections = {generation: [0, 0.0] for generation in range(3)}
began_at = [0.0]


def on_collection(phase: str, info: dict) -> None:
    if phase == 'start':
        began_at[0] = time.perf_counter()
    else:
        entry = collections[info['generation']]
        entry[0] += 1
        entry[1] += time.perf_counter() - began_at[0]


gc.callbacks.append(on_collection)
began = time.perf_counter()
for k in range(steps):
    env.step(actions[k % len(actions)])
total = time.perf_counter() - began
gc.callbacks.remove(on_collection)
print(f'{env_id} x64, {steps} vector steps of {total / steps * 1e6:.0f} us; objects the collector tracks: {len(gc.get_objects()):,}')
for generation, (count, seconds) in collections.items():
    each = f', {seconds / count * 1e3:.2f} ms each' if count else ''
    print(f'  generation {generation}: {count} collections, {seconds / steps * 1e6:.1f} us a vector step '
          f'({100 * seconds / total:.2f} %){each}')
env.close()
