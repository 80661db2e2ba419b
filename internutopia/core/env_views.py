"""What an env shows without stepping: the backend's device, the physics state's arrays, the grid's
overview image and each env's own frame.

:class:`~internutopia.core.vec_env.Env` has them from :class:`EnvViews`; they read the env's
runners and change nothing.

>>> from internutopia.core.config import Config
>>> from internutopia.core.vec_env import Env
>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
>>> task = FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg()])
>>> env = Env(Config(env_num=2, metrics_save_path='none', task_configs=[task]))
>>> _ = env.reset()
>>> env.render(320, 240).shape, [frame.shape for frame in env.render_envs(width=160, height=120)]
((240, 320, 3), [(120, 160, 3), (120, 160, 3)])
>>> env.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from internutopia.core.backend.arrays import PackArrays, array_device, check_array_backend, pack_states
from internutopia.core.config import Config
from internutopia.core.env_checks import check_reset_list
from internutopia.core.runner import LocalRunners, RunnerSet

__all__ = ['EnvViews']


class EnvViews:
    """The env's views of its world (mixed into ``vec_env.Env``, whose members these are)."""

    _runners: RunnerSet
    _config: Config
    _first_reset: bool

    if TYPE_CHECKING:
        @property
        def env_num(self) -> int: ...

        def _check_open(self) -> None: ...

    @property
    def array_device(self) -> str:
        """The device the backend's arrays live on: ``'cpu'``, or ``'cuda:N'`` on the ``warp`` backend on a GPU."""
        world = self._runners.runner.world if isinstance(self._runners, LocalRunners) else None
        return array_device(self._config.simulator, world)

    def state_arrays(self, fields: Sequence[str] = ('qpos', 'qvel'), *, array_backend: str = 'torch') -> list[PackArrays]:
        """The physics state where it lives, without a copy: per pack (the slots of one structure)
        its ``fields`` as ``(env_num, ...)`` arrays, row ``i`` env slot ``i``.

        On the ``warp`` backend, torch tensors are ``warp.to_torch`` views of the device's float32
        data and Warp arrays are that data; on ``mujoco``, views of the float64 host arrays.
        ``'numpy'`` gives the host arrays on both. They hold the state the next step starts from;
        read them (on ``warp`` the next step starts from the host copy, so writes there are lost).

        Raises:
            ValueError: an unknown field or array library (the message names the valid ones).
            RuntimeError: before the first reset, or on a Ray-distributed env (its worlds live in
                its runners' processes).
        """
        self._check_open()
        if self._first_reset:
            raise RuntimeError('call reset() before state_arrays()')
        check_array_backend(array_backend)
        if not isinstance(self._runners, LocalRunners):
            raise RuntimeError("state_arrays() views the world in this process; a Ray-distributed env's worlds live "
                               'in its runners (nor does it have step_arrays: read the observations of step() or get_observations())')
        return pack_states(self._runners.runner.world, self.env_num, list(fields), array_backend)

    def render(self, width: int = 640, height: int = 480, mode: str = 'rgb_array') -> Any:
        """An RGB image ``uint8 (height, width, 3)`` of the whole grid, from above at an angle.

        Every slot is in view (see ``internutopia.core.backend.mujoco.render.overview_camera``);
        feed frames to ``internutopia.core.util.video.VideoRecorder`` to make a video. ``mode``
        is Gymnasium's: ``'rgb_array'`` returns the image, ``'human'`` returns ``None`` (a window
        follows the env when ``SimConfig(headless=False)`` on a machine with a display).
        """
        self._check_open()
        if mode not in ('rgb_array', 'human'):
            raise ValueError(f"render mode must be 'rgb_array' or 'human'; got {mode!r}")
        if mode == 'human':
            return None
        return self._runners.render(width, height)


    def render_envs(self, env_ids: Sequence[int] | None = None, width: int = 640, height: int = 480) -> list[Any]:
        """One RGB image ``uint8 (height, width, 3)`` per env id of ``env_ids`` (every slot when
        ``None``), in that order: the slot alone, its neighbours left out, seen as :meth:`render`
        sees the grid but aimed at the slot's cell. A slot with no episode yet is the empty sky.
        This is what Gymnasium's vector envs give from ``render()`` (a frame per env).

        Raises:
            ValueError: an env id out of range or repeated (naming it and the valid ids), or a
                non-positive size.
        """
        self._check_open()
        slots = list(range(self.env_num)) if env_ids is None else check_reset_list(env_ids, self.env_num, 'env_ids')
        if int(width) < 1 or int(height) < 1:
            raise ValueError(f'render_envs: width and height must be positive; got width={width}, height={height}')
        return self._runners.render_envs(slots, int(width), int(height))
