"""Whether a compiled kernel's call costs less with its arguments bound once: the many arrays a
kernel takes each call held in one numba ``structref`` instead (built when they change).

    python docs/assets/bound_arguments_session19.py dispatch        # 60 arrays: passed, or bound
    python docs/assets/bound_arguments_session19.py tick            # H1Walk-v0's tick as it is
    python docs/assets/bound_arguments_session19.py tick-bound      # its 67 lasting arguments bound

``dispatch``: a kernel reading one number of each of 60 arrays, called with the 60 arrays and
with one structref holding them (the same memory), hot and after a 16 MB sweep of the caches
(the median of 500 calls). ``tick``/``tick-bound``: 64 envs, random leg actions, 50 vector steps
to warm up, then 1,500 vector steps; the time per vector step of the vector step and of the
walking task's tick inside it (``LocomotionTask._tick``, timed around its call). Run the two one
after the other. (Recorded in docs/performance.md, nineteenth session: the call alone is four
times cheaper hot, the tick in situ is not: not kept.)
"""

import inspect
import operator
import sys
import time

import numpy as np
from numba import njit, types
from numba.experimental import structref


def bound_type(fields: list[str]) -> type:
    """A structref proxy class holding ``fields``, its constructor compiled."""

    @structref.register
    class HeldType(types.StructRef):
        def preprocess_fields(self, members):
            return tuple((name, types.unliteral(kind)) for name, kind in members)

    class Held(structref.StructRefProxy):
        pass

    structref.define_proxy(Held, HeldType, fields)
    return Held


def generated(source: str, namespace: dict) -> object:
    exec(source, namespace)  # noqa: S102 - the experiment's own code
    return njit(namespace[source.split('(')[0][4:]])


def dispatch() -> None:
    count = 60
    names = [f'a{i}' for i in range(count)]
    arrays = [np.random.default_rng(i).random(64) for i in range(count)]
    passed = generated(f'def passed({", ".join(names)}):\n    return ' + ' + '.join(f'{n}[0]' for n in names) + '\n', {})
    held_class = bound_type(names)
    held = held_class(*arrays)
    bound = generated('def bound(h):\n    return ' + ' + '.join(f'h.{n}[0]' for n in names) + '\n', {})
    assert passed(*arrays) == bound(held)
    sweep = np.zeros(16 * 1024 * 128)

    def median_us(call, swept: bool) -> float:
        times = []
        for _ in range(500):
            if swept:
                sweep.__iadd__(1.0)
            began = time.perf_counter()
            call()
            times.append(time.perf_counter() - began)
        return float(np.median(times)) * 1e6

    for label, call in (('60 arrays passed', lambda: passed(*arrays)), ('one structref of them', lambda: bound(held))):
        print(f'{label:24s} hot {median_us(call, False):5.1f} us, after a 16 MB sweep {median_us(call, True):5.1f} us')


def tick(bind: bool) -> None:
    import gymnasium as gym

    import internutopia.envs  # noqa: F401  (registers the ids)
    from internutopia.bench.paired import time_calls
    from internutopia.bench.random_actions import warmed_random_actions
    from internutopia_extension.tasks import locomotion_kernels

    env = gym.make_vec('internutopia/H1Walk-v0', num_envs=64)
    if bind:  # (after the env is made: the tick's kernel is compiled then)
        names = list(inspect.signature(locomotion_kernels.tick_rows).parameters)[1:-3]
        held_class = bound_type(names)
        namespace = {'Held': held_class, 'tick_rows': locomotion_kernels._tick_kernel.compiled_or(None)}
        make = generated(f'def make({", ".join(names)}):\n    return Held({", ".join(names)})\n', namespace)
        call = generated('def call(slots, b, reward, terminated, truncated):\n    return tick_rows(slots, '
                         + ', '.join(f'b.{n}' for n in names) + ', reward, terminated, truncated)\n', namespace)
        kept: dict[int, tuple] = {}

        def bound_call(self, task, group, spec, walk_state, slots):
            k = len(slots)
            outputs = (np.empty(k), np.empty(k, dtype=bool), np.empty(k, dtype=bool))
            lasting = self._arguments(task, group, spec, walk_state, slots, outputs)[1:-3]
            held = kept.get(id(self))
            if held is None or not all(map(operator.is_, held[0], lasting)):
                held = kept[id(self)] = (lasting, make(*lasting))
            flags = call(slots, held[1], *outputs)
            return outputs[0], outputs[1], outputs[2], int(flags)

        locomotion_kernels.CompiledTick.__call__ = bound_call
    inner = env.unwrapped
    task = next(iter(inner.vec_env.runner.terms.tasks.values()))
    spent: dict[str, float] = {}
    time_calls(spent, inner, 'step', 'vector step')
    time_calls(spent, task, '_tick', 'tick')
    env.reset(seed=0)
    actions = warmed_random_actions(env, 50)
    spent.clear()
    steps = 1500
    for k in range(steps):
        env.step(actions[k % len(actions)])
    env.close()
    print(f'{"bound" if bind else "as it is"}: vector step {spent["vector step"] / steps * 1e6:.1f} us, '
          f'the tick {spent["tick"] / steps * 1e6:.1f} us')


if __name__ == '__main__':
    mode = sys.argv[1] if len(sys.argv) > 1 else 'dispatch'
    if mode == 'dispatch':
        dispatch()
    else:
        tick(mode == 'tick-bound')
