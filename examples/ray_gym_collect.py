"""Collecting Gymnasium vector-env rollouts on Ray workers, one world per worker.

The Gymnasium adapters step their world in the calling process (a ``DistributedConfig`` is
refused), so experience is collected on many cores or machines the way RLlib's env runners do it:
each Ray actor builds its own vector env (``gymnasium.make_vec``: all its envs slots of one MuJoCo
world) and rolls out the driver's policy there; the driver sends the policy's weights and gathers
the workers' batches, all workers stepping at once. Here the policy is linear with Gaussian
exploration noise (zero weights: the noise alone) and the driver only collects, printing each
worker's env steps, finished episodes and their mean return, and the throughput of all together.

    python examples/ray_gym_collect.py [--id internutopia/JetbotPointNav-v0] [--workers 2]
                                       [--envs-per-worker 8] [--steps 200] [--rounds 2] [--seed 0]

A worker's rollout is :func:`rollout` on its own vector env, so the same seed gives the same batch
in a worker and in this process (``tests/test_example_ray_collect.py`` checks it). Ray starts here (on
this machine) unless the script runs inside a Ray job already; each worker reserves one CPU.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

#: Seconds a round of rollouts may take before the driver gives up on its workers.
ROUND_TIMEOUT_S = 600.0


def rollout(envs: Any, obs: np.ndarray, weights: np.ndarray, rng: np.random.Generator, steps: int,
            noise: float = 0.3) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``steps`` vector steps of ``envs`` (a reset Gymnasium vector env whose last observation is
    ``obs``) with the linear policy ``weights`` (``action = obs @ weights`` plus Gaussian noise of
    scale ``noise`` times the action space's half-width, clipped to the space). The batch
    (``obs``, ``actions``, ``rewards``, ``terminated``, ``truncated``: ``(steps, num_envs, ...)``;
    ``episode_returns``: the summed rewards of the episodes that ended, in the order they ended)
    and the observation after the last step."""
    space = envs.single_action_space
    half_width = (space.high - space.low) / 2.0
    batch: dict[str, list] = {'obs': [], 'actions': [], 'rewards': [], 'terminated': [], 'truncated': []}
    running = np.zeros(envs.num_envs)
    finished: list[float] = []
    for _ in range(steps):
        action = obs @ weights + noise * half_width * rng.standard_normal((envs.num_envs, *space.shape))
        action = np.clip(action, space.low, space.high).astype(space.dtype)
        next_obs, reward, terminated, truncated, _ = envs.step(action)
        for name, value in zip(batch, (obs, action, reward, terminated, truncated), strict=True):
            batch[name].append(value)
        running += reward
        ended = np.flatnonzero(terminated | truncated)
        finished.extend(running[ended].tolist())
        running[ended] = 0.0
        obs = next_obs
    arrays = {name: np.stack(values) for name, values in batch.items()}
    arrays['episode_returns'] = np.array(finished)
    return arrays, obs


class Collector:
    """One worker: its own vector env of ``num_envs`` envs of ``env_id``, reset with ``seed``
    (run as a Ray actor by :func:`main`; a plain object in this process works the same)."""

    def __init__(self, env_id: str, num_envs: int, seed: int) -> None:
        import gymnasium

        import internutopia.envs  # noqa: F401  (registers the ids in the worker's process)

        self.envs = gymnasium.make_vec(env_id, num_envs=num_envs)
        self.obs, _ = self.envs.reset(seed=seed)
        self.rng = np.random.default_rng(seed)

    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        """The observation's and the action's shapes, and the env steps of one vector step."""
        return (self.envs.single_observation_space.shape, self.envs.single_action_space.shape,
                self.envs.num_envs * self.envs.unwrapped.action_repeat)

    def rollout(self, weights: np.ndarray, steps: int) -> dict[str, np.ndarray]:
        batch, self.obs = rollout(self.envs, self.obs, weights, self.rng, steps)
        return batch

    def close(self) -> None:
        self.envs.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--id', default='internutopia/JetbotPointNav-v0', help='a Gymnasium id (flat Box observations)')
    parser.add_argument('--workers', type=int, default=2, help='Ray actors, each with its own world')
    parser.add_argument('--envs-per-worker', type=int, default=8)
    parser.add_argument('--steps', type=int, default=200, help='vector steps per worker and round')
    parser.add_argument('--rounds', type=int, default=2, help='rounds of rollouts (the weights are sent each round)')
    parser.add_argument('--seed', type=int, default=0, help='worker w resets with seed + w')
    args = parser.parse_args(argv)
    for name in ('workers', 'envs_per_worker', 'steps', 'rounds'):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1; got {getattr(args, name)}")
    if args.seed < 0:
        parser.error(f'--seed must be >= 0; got {args.seed}')
    import gymnasium

    from internutopia.envs.ids import registered_ids  # (importing internutopia.envs registers the ids)

    if args.id not in gymnasium.registry:
        parser.error(f'unknown --id {args.id!r}; choose from {", ".join(registered_ids())}')
    import ray

    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(Collector)
    workers = [remote.remote(args.id, args.envs_per_worker, args.seed + w) for w in range(args.workers)]
    try:
        obs_shape, action_shape, env_steps_per_step = ray.get(workers[0].shapes.remote(), timeout=ROUND_TIMEOUT_S)
        if len(obs_shape) != 1:
            parser.error(f'{args.id} has observations of shape {obs_shape}; this example\'s linear policy needs flat ones')
        weights = np.zeros((obs_shape[0], *action_shape), dtype=np.float32)
        for round_number in range(1, args.rounds + 1):
            began = time.perf_counter()
            batches = ray.get([w.rollout.remote(weights, args.steps) for w in workers], timeout=ROUND_TIMEOUT_S)
            seconds = time.perf_counter() - began
            for w, batch in enumerate(batches):
                returns = batch['episode_returns']
                mean = f'{returns.mean():.3f}' if len(returns) else 'n/a'
                print(f'round {round_number} worker {w}: {args.steps * env_steps_per_step:,} env steps, '
                      f'{len(returns)} episodes ended, mean return {mean}')
            total = args.workers * args.steps * env_steps_per_step
            print(f'round {round_number}: {total:,} env steps in {seconds:.2f} s ({total / seconds:,.0f} env-steps/s)', flush=True)
    finally:
        for w in workers:
            try:
                ray.get(w.close.remote(), timeout=60)
            except Exception:  # noqa: BLE001 - a worker that died: killed below all the same
                pass
            ray.kill(w)
        if started_ray:
            ray.shutdown()


if __name__ == '__main__':
    main()
