"""How much of H1Walk-v0's Python outside the physics is cold caches: parts of its step called
twice in a row (hot) and right after the caches were swept, and its task's tick after a real
physics call.

    python docs/assets/cold_caches_session19.py

64 envs, random leg actions, warmed for 20 vector steps. ``sweep``: a 16 MB array is added to
(every cache line of it written) between the calls, about what a physics call of 64 H1s moves
through the caches; the median of 500 calls each. The tick (``LocomotionTask``'s compiled pass,
:class:`~internutopia_extension.tasks.locomotion_kernels.CompiledTick`) is called for no slot
(the call alone: its 71 arguments) and for all 64, hot, after the sweep, and after a physics
call of the world (four steps). (Recorded in docs/performance.md, nineteenth session.)
"""

import time

import gymnasium as gym
import numpy as np

import internutopia.envs  # noqa: F401  (registers the ids)
from internutopia.bench.random_actions import warmed_random_actions

CALLS = 500
env = gym.make_vec('internutopia/H1Walk-v0', num_envs=64)
runner = env.unwrapped.vec_env.runner
env.reset(seed=0)
actions = warmed_random_actions(env, 20)
sweep = np.zeros(16 * 1024 * 128)  # 16 MB of float64
episode = runner.table.episodes[5]


def median_us(call, before=None) -> float:
    times = []
    for _ in range(CALLS):
        if before is not None:
            before()
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return float(np.median(times)) * 1e6


def swept() -> None:
    sweep.__iadd__(1.0)


parts = {
    "a task's start (terms.start_many, one slot)": lambda: runner.terms.start_many([5], [episode.config], [], {}),
    'placing (starts.place, one slot)': lambda: runner.starts.place([5], [episode], []),
    "an episode's end and record (ends.finish)": lambda: runner.ends.finish(5, False, True),
}
print(f'{"part":48s} {"hot":>8s} {"swept":>8s}')
for label, call in parts.items():
    call()  # (warm)
    print(f'{label:48s} {median_us(call):7.1f}us {median_us(call, swept):7.1f}us')

task = next(iter(runner.terms.tasks.values()))
group = task.robot.only_group()
spec = task._group_starts[id(group)][1].spec
walk_state = group.walker.compiled_state
slots = runner.table.active_slots()


def tick(rows: np.ndarray):
    return lambda: task._tick(task, group, spec, walk_state, rows)


def physics() -> None:
    runner.world.step(4)


for rows, label in ((slots[:0], 'the tick, no slot (the call alone)'), (slots, 'the tick, 64 slots')):
    print(f'{label:48s} {median_us(tick(rows)):7.1f}us {median_us(tick(rows), swept):7.1f}us'
          f'  after a physics call {median_us(tick(rows), physics):7.1f}us')
env.close()
