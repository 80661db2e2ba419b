"""Process pools of single-robot camera envs, the camera rows' comparison with what users run
without batching (see :mod:`internutopia.bench.cameras`).

- :func:`measure_async_cameras`: ``gymnasium.vector.AsyncVectorEnv`` over ``env_num`` camera envs,
  timed on its own (the plain-renderer pool, which ours outruns many times over);
- :func:`measure_beside_pool`: ours and a pool of our own env with the same camera, both open in
  one fresh process and timed side by side in alternating chunks
  (:func:`internutopia.bench.paired.time_pairs`): ours' chunk of steps, then the pool's, and the
  median of the pairs' ratios is the figure. Like every ratio of this benchmark it is taken side
  by side, so a machine that slows down for a while slows both halves of a pair alike; and no
  other renderer runs between ours' chunks (the render limit's plain renderer does, in
  :func:`~internutopia.bench.cameras.measure_camera_ours`, and costs ours' next chunk a few per cent).

Every pool's workers die with the benchmark (:mod:`internutopia.bench.pool`).

    python -c "from internutopia.bench.camera_pool import measure_beside_pool; print(measure_beside_pool('h1', 'tp_rgb', 4, 8, 2))"
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from internutopia.bench.camera_setup import RESOLUTION, SETTINGS, PlainCamera, camera_config, path_action
from internutopia.bench.fresh import run_in_fresh_process
from internutopia.bench.ours import peak_memory_mb
from internutopia.bench.paired import ChunkReplay, summarize, time_pairs
from internutopia.bench.pool import async_vector_env, pool_memory, time_steps

__all__ = ['CameraEnvFactory', 'PoolChunks', 'measure_async_cameras', 'measure_beside_pool']

#: Pairs timed and thrown away first (warms caches, the render threads and the pool's processes).
WARM_PAIRS = 1


class CameraEnvFactory:
    """Picklable factory of one single-robot env with the camera (for AsyncVectorEnv).

    ``plain``: our ``gym_env.Env`` steps the robot (its camera renders only at the episode's
    start) and a :class:`PlainCamera` draws every frame; otherwise our camera renders every step.
    The observation is the image (``rgb``) and, for RGB-D, the depth map.
    """

    def __init__(self, robot: str, setting: str, plain: bool) -> None:
        self.args = (robot, setting, plain)

    def __call__(self) -> Any:
        import gymnasium as gym

        from internutopia.core.backend.mujoco.world import Pack as MujocoPack
        from internutopia.core.gym_env import Env as GymEnv
        from internutopia_extension import import_extensions

        robot, setting, plain = self.args
        chosen = SETTINGS[setting]
        import_extensions()
        inner = GymEnv(camera_config(robot, setting, 1, render_every_step=not plain))
        command = path_action(robot)[robot]
        width, height = RESOLUTION
        spaces: dict[str, gym.Space] = {'rgb': gym.spaces.Box(0, 255, (height, width, 3 if plain else 4), np.uint8)}
        if chosen.depth:
            spaces['depth'] = gym.spaces.Box(0.0, np.inf, (height, width), np.float32)
        if chosen.annotations:
            spaces['ids'] = gym.spaces.Box(-1, 2 ** 31 - 1, (height, width, 2) if plain else (height, width), np.int32)
        pack_of = lambda: inner._vec_env.runner.world.pack(0)  # noqa: E731 - the one slot's pack
        camera_holder: list[PlainCamera] = []

        def observe(obs: dict) -> dict:
            if plain:
                pack = pack_of()
                assert isinstance(pack, MujocoPack)  # (the plain camera draws a MuJoCo model)
                if not camera_holder:
                    camera_holder.append(PlainCamera(pack.drawn_model, 0, chosen.depth, chosen.annotations))
                rgb, depth = camera_holder[0].frame(pack.drawn_data(0))
                out: dict[str, np.ndarray | None] = {'rgb': rgb, 'depth': depth} if chosen.depth else {'rgb': rgb}
                if chosen.annotations:
                    out['ids'] = camera_holder[0].ids
                return out
            reading = next(iter(obs['sensors'].values()))
            out = {'rgb': reading['rgba'], 'depth': reading['depth']} if chosen.depth else {'rgb': reading['rgba']}
            if chosen.annotations:
                out['ids'] = reading['semantic_segmentation']['data']
            return out

        class CameraEnv(gym.Env):
            observation_space = gym.spaces.Dict(spaces)
            action_space = gym.spaces.Discrete(1)

            def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
                obs, _ = inner.reset()
                return observe(obs), {}

            def step(self, action: Any) -> tuple:
                obs, reward, terminated, truncated, _ = inner.step(command)
                return observe(obs), reward, terminated, truncated, {}

            def peak_mb(self) -> float:
                return peak_memory_mb()

        return CameraEnv()


def measure_async_cameras(robot: str, setting: str, env_num: int, steps: int, plain: bool) -> tuple[float, float, float]:
    """``(env-steps/s, peak MB of one env process, peak MB of the pool's process tree)`` of
    ``AsyncVectorEnv`` over ``env_num`` camera envs (workers that die with the benchmark:
    :mod:`internutopia.bench.pool`)."""
    vector = async_vector_env([CameraEnvFactory(robot, setting, plain)] * env_num)
    try:
        rate = time_steps(vector, steps)
        return rate, float(max(vector.call('peak_mb'))), pool_memory(vector)['tree_peak_mb']
    finally:
        vector.close()



class PoolChunks(ChunkReplay):
    """A pool in the place of :func:`~internutopia.bench.paired.time_pairs`' limit: after each
    chunk of our steps, ``chunk`` steps of the pool; its time per step is the chunk's wall time
    over ``chunk`` (a pool step is one frame in each of its ``env_num`` envs, as ours is)."""

    def __init__(self, vector: Any, chunk: int) -> None:
        self.vector = vector
        self.chunk = max(1, int(chunk))
        self.actions = np.zeros(vector.num_envs, dtype=np.int64)  # the camera envs ignore their actions

    def replay(self) -> float:
        began = time.perf_counter()
        for _ in range(self.chunk):
            self.vector.step(self.actions)
        return (time.perf_counter() - began) / self.chunk


def _beside_pool(robot: str, setting: str, env_num: int, steps: int, chunk: int, threads: int | None) -> dict[str, Any]:
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    # Ours first, as in a process of its own: its first frames make the GL displays (the pool's
    # constructor makes one env here to read its spaces, and that env's frame would make them).
    env = Env(camera_config(robot, setting, env_num, threads=threads))
    vector = None
    try:
        env.reset()
        actions = [path_action(robot)] * env_num

        def step() -> None:
            env.step(actions)

        for _ in range(3):
            step()
        vector = async_vector_env([CameraEnvFactory(robot, setting, plain=False)] * env_num)
        pool = PoolChunks(vector, chunk)
        vector.reset()
        for _ in range(3):
            vector.step(pool.actions)
        time_pairs(step, pool, WARM_PAIRS, pool.chunk)
        ours, theirs, clean = time_pairs(step, pool, max(1, steps // pool.chunk), pool.chunk)
        out: dict[str, Any] = summarize(ours, theirs, clean)
        memory = pool_memory(vector)
        out.update({'chunk': pool.chunk, 'pool_worker_peak_mb': memory['worker_peak_mb'],
                    'pool_workers_mb': memory['workers_mb'], 'ours_peak_mb': peak_memory_mb()})
        return out
    finally:
        if vector is not None:
            vector.close()
        env.close()


def measure_beside_pool(robot: str, setting: str, env_num: int, steps: int, chunk: int,
                        threads: int | None = None) -> dict[str, Any]:
    """Ours (``vec_env.Env`` with ``env_num`` slots) against ``AsyncVectorEnv`` over ``env_num`` of
    our own one-robot ``gym_env.Env``, both with the camera of ``setting``, side by side in a fresh
    process: ``steps`` steps of each, in alternating chunks of ``chunk``.

    Returns :func:`~internutopia.bench.paired.summarize`'s figures (``ratio``: ours' speed over the
    pool's, the median of the pairs; ``ours_step_s`` and ``limit_step_s``: the median seconds per
    step of ours and of the pool) with ``chunk``, the pool's largest worker and all its workers'
    peak memory (``pool_worker_peak_mb``, ``pool_workers_mb``) and ours' (``ours_peak_mb``, the
    process that also drives the pool). ``threads`` sets ours' ``rendering_threads``.
    """
    return run_in_fresh_process(_beside_pool, robot, setting, env_num, steps, chunk, threads,
                                what=f'camera case {robot} x{env_num} {setting} beside a pool of our env')
