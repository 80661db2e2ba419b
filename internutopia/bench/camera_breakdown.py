"""Where a robot camera frame's time goes: the benchmark's camera setting drawn with parts of the
scene hidden, or without read-back, on one render thread (see ``docs/perception.md``).

    python -c "from internutopia.bench.camera_breakdown import frame_breakdown; print(frame_breakdown('h1', 'tp_rgb'))"
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from internutopia.bench.camera_setup import RESOLUTION, SETTINGS, camera_config, path_action
from internutopia.bench.fresh import run_in_fresh_process


def _breakdown(robot: str, setting: str, env_num: int, rounds: int) -> dict[str, Any]:
    from internutopia.core.backend.mujoco.render import HIDDEN_GROUP, camera_renderers, framebuffers
    from internutopia.core.backend.mujoco.render.cameras import FrameRequest
    from internutopia.core.vec_env import Env
    from internutopia_extension import import_extensions

    import_extensions()
    chosen = SETTINGS[setting]
    env = Env(camera_config(robot, setting, env_num, threads=1))
    env.reset()
    for _ in range(3):
        env.step([path_action(robot)] * env_num)
    renderer = camera_renderers(env.runner.world)[0]
    pack = renderer.pack
    model = pack.drawn_model  # (the geoms the renderer draws)
    cam = model.ncam - 1
    width, height = RESOLUTION
    robot_geoms = np.array([(model.body(int(b)).name or '').startswith(f'{robot}/') for b in model.geom_bodyid])
    scene_geoms = ~robot_geoms
    base = renderer.culling.base_groups.copy()
    original_read = framebuffers.FrameBuffers.read

    def finish_only(self: Any, index: int, rgba: Any, depth: Any) -> None:
        if index == 0:
            framebuffers._gl().glFinish()

    def frames() -> list[FrameRequest]:
        return [FrameRequest(int(slot), cam, np.empty((height, width, 4), np.uint8),
                             np.empty((height, width), np.float32) if chosen.depth else None,
                             segmentation=np.empty((height, width), np.int32) if chosen.annotations else None)
                for slot in pack.slots]

    def variant(name: str) -> None:
        renderer.culling.base_groups[:] = base
        framebuffers.FrameBuffers.read = original_read  # type: ignore[method-assign]
        if name == 'robot_hidden':
            renderer.culling.base_groups[robot_geoms] = HIDDEN_GROUP
        elif name == 'scene_hidden':
            renderer.culling.base_groups[scene_geoms] = HIDDEN_GROUP
        elif name == 'nothing_drawn':
            renderer.culling.base_groups[:] = HIDDEN_GROUP
        elif name == 'no_readback':
            framebuffers.FrameBuffers.read = finish_only  # type: ignore[method-assign]

    names = ['full', 'robot_hidden', 'scene_hidden', 'nothing_drawn', 'no_readback']
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}  # process CPU time, every thread (steadier on a shared machine)
    try:
        for _ in range(rounds):  # variants interleaved, so a busy machine slows them alike
            for name in names:
                variant(name)
                renderer.render(frames())
                began, began_cpu = time.perf_counter(), time.process_time()
                renderer.render(frames())
                times[name].append((time.perf_counter() - began) / len(pack.slots) * 1000)
                cpu[name].append((time.process_time() - began_cpu) / len(pack.slots) * 1000)
    finally:
        variant('full')
        env.close()
    out: dict[str, Any] = {f'{name}_ms': round(float(np.median(values)), 2) for name, values in times.items()}
    out.update({f'{name}_cpu_ms': round(float(np.median(values)), 2) for name, values in cpu.items()})
    out.update({'robot': robot, 'cameras': setting, 'env_num': env_num, 'rounds': rounds,
                'faces_drawn': int(renderer.render_model.model.mesh_facenum.sum())})
    return out


def frame_breakdown(robot: str = 'h1', setting: str = 'tp_rgb', env_num: int = 16, rounds: int = 5) -> dict[str, Any]:
    """Where one frame's time goes, in a fresh process: median milliseconds per frame of a batch of
    ``env_num`` frames on one render thread, in full and with the robot's geoms hidden, the scene's
    hidden, nothing drawn (clear and per-frame overhead only), and with no read-back (the GPU work
    waited for, nothing copied out); the variants are interleaved over ``rounds`` rounds. ``*_cpu_ms``
    are the same in CPU time of the whole process (every thread, Mesa's included), which a busy
    machine disturbs less than the wall clock."""
    return run_in_fresh_process(_breakdown, robot, setting, env_num, rounds, what=f'frame breakdown {robot} {setting}')


__all__ = ['frame_breakdown']
