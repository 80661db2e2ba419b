"""``internutopia view CONFIG.yaml``: run a config with its scripted policy and watch it in a browser.

The env runs in real time (one env step per ``physics_dt`` of wall time, or faster with
``--speed``), each slot driven as ``internutopia run`` drives it (:mod:`internutopia.cli.policies`);
finished episodes are replaced from the queue. When every episode has finished the page stays up
with the last state until Ctrl-C.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

from internutopia.viewer.server import check_address
from internutopia.viewer.viewer import attach_viewer

__all__ = ['need_viewer', 'view']


def need_viewer() -> None:
    """Raise ``ImportError`` (saying how to install it) when the viewer's web server, ``viser``, is
    missing: checked before the config is loaded and the env built, which the viewer would only
    find out after."""
    try:
        import viser  # noqa: F401 - only whether it imports
    except ImportError:
        raise ImportError("the viewer needs the 'viewer' extra: pip install 'internutopia[viewer]'") from None


def view(path: str, port: int, host: str = '0.0.0.0', overrides: Sequence[str] = (), speed: float = 1.0,
         steps: int | None = None, log: Any = print) -> int:
    """Serve ``path``'s run on ``host:port`` until Ctrl-C (or ``steps`` env steps); returns the steps taken.

    ``port`` is 0-65535 (the next free one when it is taken; 0: any free one); ``speed`` is
    simulated seconds per wall-clock second, >= 0 (0: as fast as it runs).

    Raises:
        ImportError: ``viser`` is not installed (:func:`need_viewer`).
        ConfigError: the config has problems.
        ViewerStartError: the web server cannot start on ``host:port`` (checked before the env is
            built; the message names the host, the port and the cause).
        ValueError: ``speed`` is negative or not a number.
    """
    from internutopia.cli.config_file import load_config
    from internutopia.cli.policies import ScriptedPolicy
    from internutopia.core.vec_env import Env

    if not 0 <= speed < float('inf'):
        raise ValueError(f'speed must be a finite number >= 0 (0: as fast as it runs), got {speed}')
    need_viewer()
    config = load_config(path, overrides=overrides)
    check_address(host, port)  # fail now, before building the env
    config = config.update(metrics_save_path='none', simulator=config.simulator.update(headless=True))
    env = Env(config)
    try:
        viewer = attach_viewer(env, host=host, port=port)
        obs, _ = env.reset()
        if port and viewer.port != port:
            log(f'[internutopia] port {port} is in use; serving on port {viewer.port}')
        log(f'[internutopia] viewing {path} at {viewer.url} (Ctrl-C to stop)')
        policy = ScriptedPolicy(env)
        policy.start(list(range(env.env_num)))
        dt = config.simulator.physics_dt / speed if speed > 0 else 0.0
        began = time.perf_counter()
        taken = 0
        while steps is None or taken < steps:
            if env.finished:
                log('[internutopia] every episode has finished; the page shows the last state (Ctrl-C to stop)')
                while steps is None:
                    time.sleep(0.5)
                break
            obs, _, terminated, _, info = env.step(policy.actions(obs))
            taken += 1
            ended = [slot for slot in range(env.env_num) if terminated[slot] and info[slot] is not None]
            # (The last episodes to end keep their slots: a reset with the queue empty would empty
            # them, and the page keeps the last state.)
            if ended and (env.queue_len or env.active_slots):
                new_obs, _ = env.reset(ended)
                for slot, slot_obs in zip(ended, new_obs, strict=True):
                    obs[slot] = slot_obs
                policy.start(ended)
            ahead = began + taken * dt - time.perf_counter()
            if ahead > 0:
                time.sleep(ahead)
        return taken
    finally:
        env.close()
        sys.stdout.flush()
