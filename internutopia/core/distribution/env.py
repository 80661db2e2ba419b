"""``DistributedEnv``: the ``vec_env.Env`` contract over ``proc_num`` Ray runner actors.

``vec_env.Env(config.distribute(RayDistributionCfg(proc_num=P)))`` returns one of these: a
``vec_env.Env`` of ``P * env_num`` slots whose runners are a
:class:`~internutopia.core.distribution.runners.RayRunners`. Argument checking, result lists and
the env's life cycle are ``vec_env.Env``'s own code; this class adds what only Ray has (its
actors, restarts, one runner's render). See ``docs/distributed.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from internutopia.core.config import Config, DistributedConfig, TaskCfg
from internutopia.core.distribution.runners import RayRunners
from internutopia.core.runner import Runner
from internutopia.core.runner.reads import RobotDescription
from internutopia.core.vec_env import Env, Finished

__all__ = ['DistributedEnv', 'NotInDistributedMode']


class NotInDistributedMode(NotImplementedError, AttributeError):
    """What InternUtopia raises for the members its distributed env does not have (``runner``,
    ``simulation_app``, ``get_dt()``, ``finished()``); scripts written for it test for this, so
    ours raises it too. It is also an ``AttributeError``: ``hasattr(env, 'runner')`` is ``False``."""


class _FinishedTruth(Finished):
    """``env.finished`` of a distributed env: a truth value; calling it raises as InternUtopia does."""

    __slots__ = ()

    def __call__(self) -> bool:
        raise NotInDistributedMode('finished() is not available in distributed mode (as in InternUtopia); '
                                   'read env.finished as a truth value: `while not env.finished: ...`')


class DistributedEnv(Env):
    """``proc_num`` worlds of ``env_num`` slots each, in Ray actors, behind one ``vec_env.Env``.

    Built by ``vec_env.Env(distributed_config)``; global slot ``g`` is local slot ``g % env_num``
    of runner ``g // env_num``.

    Args:
        config: a :class:`DistributedConfig` (from ``Config.distribute``); never modified.
        episodes: optional replacement for ``config.task_configs`` (any iterable of ``TaskCfg``
            that can be pickled, e.g. a list or ``itertools.cycle(tasks)``; not a generator).
    """

    _runners: RayRunners
    _config: DistributedConfig

    def _make_runners(self, config: Config, episodes: Iterable[TaskCfg] | None) -> RayRunners:
        if not isinstance(config, DistributedConfig):
            raise TypeError(f'DistributedEnv expects a DistributedConfig, got {type(config).__name__}')
        return RayRunners(config, episodes)

    @property
    def config(self) -> DistributedConfig:
        """The config this env was built from (never changed by the env)."""
        return self._config

    @property
    def proc_num(self) -> int:
        """Number of runner actors."""
        return self._runners.proc_num

    @property
    def is_remote(self) -> bool:
        """Whether the slots run in other processes: ``True``."""
        return True

    @property
    def runner(self) -> Runner:
        """Not available: the runners live in Ray actors (see :attr:`runner_actors`)."""
        raise NotInDistributedMode('a DistributedEnv has no local runner (as in InternUtopia); its runners are Ray '
                                   'actors: see runner_actors')

    @property
    def simulation_app(self) -> Any:
        """Not available in distributed mode, as in InternUtopia; loop on ``while not env.finished``."""
        raise NotInDistributedMode('simulation_app is not available in distributed mode (as in InternUtopia); loop '
                                   'with `while not env.finished:`')

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    @property
    def finished(self) -> Finished:
        """Whether the queue is empty and no slot runs an episode, as a truth value (``if env.finished``).

        Calling it (``env.finished()``) raises :class:`NotInDistributedMode`, as InternUtopia's
        distributed env does.
        """
        return _FinishedTruth(not self._runners.active_slots() and self._runners.queue_len() == 0)

    def get_dt(self) -> float:
        """Not available in distributed mode, as in InternUtopia; the step length is
        ``env.config.simulator.physics_dt``."""
        raise NotInDistributedMode('get_dt() is not available in distributed mode (as in InternUtopia); '
                                   'read env.config.simulator.physics_dt')

    @property
    def runner_actors(self) -> list[Any]:
        """The Ray actor handles of the runners, by runner id (replaced when one is restarted)."""
        return self._runners.actors

    @property
    def runner_restarts(self) -> list[int]:
        """How many times each runner was replaced after dying, by runner id."""
        return self._runners.runner_restarts

    @property
    def queue_actor(self) -> Any:
        """The Ray actor handle of the episode queue."""
        return self._runners.queue_actor

    def runner_info(self) -> list[dict[str, Any]]:
        """``{'runner_id', 'pid', 'host'}`` of each runner."""
        return self._runners.runner_info()

    @property
    def slot_episodes(self) -> list[int | None]:
        """Queue index of the episode each active slot runs (``None`` for done and empty slots)."""
        return self._runners.slot_episodes()

    # -- what a recording asks (internutopia.recording.source) ---------------------------------
    def ship_parsed_actions(self, on: bool) -> None:
        """Whether each step's runners send back its commands as their controllers parsed them
        (:attr:`parsed_actions`); a recording turns it on while it is attached."""
        self._runners.ship_parsed_actions(on)

    @property
    def parsed_actions(self) -> list[Any]:
        """The latest step's commands per slot, ``{robot: {controller: parsed}}`` (``None`` for a
        slot without commands), while :meth:`ship_parsed_actions` is on."""
        return self._runners.parsed_actions

    def slot_controllers(self, slots: list[int]) -> list[dict[str, RobotDescription]]:
        """Each of ``slots``' robots, ``{name: (robot class, {controller: fixed action_shape or None})}``
        (one call to each runner concerned, all at once)."""
        return self._runners.slot_controllers(list(slots))

    # (Not Env.render's third argument, the Gymnasium mode: as documented, a distributed env
    # draws one runner's world, chosen by id; the mode is taken by keyword, as Env takes it.)
    def render(self, width: int = 640, height: int = 480, runner_id: int = 0,  # type: ignore[override]
               *, mode: str = 'rgb_array') -> Any:
        """An RGB image ``(height, width, 3)`` of runner ``runner_id``'s world (its ``env_num`` slots);
        ``mode='human'`` returns ``None``, as ``Env.render`` does (no window draws Ray's worlds)."""
        self._check_open()
        if mode not in ('rgb_array', 'human'):
            raise ValueError(f"render mode must be 'rgb_array' or 'human'; got {mode!r}")
        if mode == 'human':
            return None
        return self._runners.render(width, height, runner_id)
