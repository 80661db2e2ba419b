"""``vec_env.Env``: up to ``env_num`` episodes at once in one physics world.

The contract (``docs/contract.md``): ``reset(reset_list)`` gives the listed slots the next episodes from the
queue and returns ``(obs, info)`` lists aligned to ``reset_list``; ``step(action)`` takes one
action entry per slot and returns five lists of length ``env_num``: ``terminated`` is ``True`` where
an episode ended (``truncated`` too when a step limit ended it) and where no episode runs, the
other lists hold ``None`` for done and empty slots. Bad input raises ``ValueError`` before anything
changes.

>>> from internutopia.core.config import Config
>>> from internutopia_extension import import_extensions
>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
>>> import_extensions()
>>> task = FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.05))])
>>> env = Env(Config(env_num=2, env_offset_size=5, metrics_save_path='none', task_configs=[task] * 3))
>>> obs, info = env.reset()
>>> [type(o).__name__ for o in obs], [i.type for i in info]
(['dict', 'dict'], ['FiniteStepTask', 'FiniteStepTask'])
>>> _ = env.step([None, None]); obs, reward, terminated, truncated, info = env.step([None, None])
>>> terminated, truncated
([True, True], [True, True])
>>> obs, info = env.reset([1, 0]); [o is None for o in obs]
[False, True]
>>> env.close()
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from internutopia.core.backend.arrays import check_array_backend
from internutopia.core.config import Config, DistributedConfig, TaskCfg
from internutopia.core.env_checks import check_action_list, check_reset_list, check_warm_up, reset_slots
from internutopia.core.env_protocols import ObservedCalls, StepObserver, Viewer, notify_observers, open_viewer, synced_viewer
from internutopia.core.env_results import Finished, convert_step, internutopia_flags
from internutopia.core.env_upstream import UpstreamEnvMembers
from internutopia.core.env_views import EnvViews
from internutopia.core.plugins import load_extensions
from internutopia.core.runner import ArrayStep, LocalRunners, Runner, RunnerSet, check_task_list
from internutopia.core.runner.failures import STEP_RESULT_ATTRIBUTE, step_result_of
from internutopia.core.runner.guard import held_interrupts
from internutopia.core.runner.observations import ObservedEntries
from internutopia.core.simulation_app import MAX_STEPS_ENV, SimulationApp, StopAppAfter, max_steps_from_environ
from internutopia.per_slot import UpstreamRunner

#: Names other modules, scripts and the docs import from here (some now live in the small modules
#: above: the app handle, the argument checks, the result helpers).
__all__ = ['MAX_STEPS_ENV', 'Env', 'Finished', 'SimulationApp', 'StepObserver', 'internutopia_flags', 'register_env_class']

#: Env classes for kinds of config, most recently registered first (see :func:`register_env_class`).
_ENV_CLASSES: list[tuple[type, type]] = []


def register_env_class(config_type: type, env_class: type[Env]) -> None:
    """Make ``Env(config)`` build an ``env_class`` for a ``config`` of ``config_type``.

    An adapter registers itself this way from its extension entry point (the Ray one makes
    ``Env(distributed_config)`` a ``DistributedEnv``), so this module never imports the layers
    above it. ``env_class`` must subclass :class:`Env`.
    """
    if not (isinstance(env_class, type) and issubclass(env_class, Env)):
        raise TypeError(f'register_env_class: {env_class!r} is not a subclass of vec_env.Env')
    _ENV_CLASSES[:] = [(c, e) for c, e in _ENV_CLASSES if c is not config_type]
    _ENV_CLASSES.insert(0, (config_type, env_class))


def _env_class_for(config: Any) -> type[Env] | None:
    for config_type, env_class in _ENV_CLASSES:
        if isinstance(config, config_type):
            return env_class
    return None


class Env(UpstreamEnvMembers, ObservedCalls, EnvViews):
    """A vectorized env of ``config.env_num`` slots sharing one physics world.

    Args:
        config: the run's :class:`~internutopia.core.config.Config`; it is never modified.
        episodes: optional replacement for ``config.task_configs``: any iterable of ``TaskCfg``,
            e.g. ``itertools.cycle(tasks)`` for an endless queue. A list or tuple is copied
            (episodes and all) when the env is built, as ``config`` is; an iterator is drawn
            from when a reset needs its next episode.
    """


    def __new__(cls, config: Any = None, *args: Any, **kwargs: Any) -> Env:
        # A config an adapter claimed (Config.distribute's DistributedConfig: the Ray adapter)
        # builds that adapter's env class; see register_env_class.
        if cls is Env and isinstance(config, Config):
            load_extensions()
            target = _env_class_for(config)
            if target is not None:
                return super().__new__(target)
        return super().__new__(cls)

    def __init__(self, config: Config, episodes: Iterable[TaskCfg] | None = None) -> None:
        if not isinstance(config, Config):
            raise TypeError(f'Env expects an internutopia.core.config.Config, got {type(config).__name__}')
        if isinstance(config, DistributedConfig) and type(self) is Env:
            raise RuntimeError('no env is registered for a DistributedConfig: the Ray adapter '
                               '(internutopia.core.distribution) did not load; see internutopia.core.plugins')
        load_extensions()
        # The env's own copy: later edits of the user's objects (env_num, the task list, a robot's
        # position) change nothing here.
        config = config.model_copy(deep=True)
        # An episode list is taken as it is now, too (each episode its own copy): appending to it
        # or editing one of its TaskCfgs later changes nothing. An iterator is drawn from lazily
        # (it may be endless), so what it yields is taken when a reset reaches it.
        if isinstance(episodes, (list, tuple)):
            if not episodes:
                raise ValueError('episodes must hold at least one TaskCfg (leave it out, or pass None, to run '
                                 "the config's task_configs)")
            episodes = [task.model_copy(deep=True) if isinstance(task, TaskCfg) else task for task in episodes]
        # A list's misspelt types fail here, not at the reset that reaches them.
        check_task_list(episodes if episodes is not None else config.task_configs)
        for name in type(config).model_fields:  # (its validators again: model_copy(update=...) skips them)
            setattr(config, name, getattr(config, name))
        self._config = config
        # (the episodes the env runs, as task_config_manager lists them: None for an iterator)
        self._episode_list = episodes if isinstance(episodes, list) else config.task_configs if episodes is None else None
        self._app = SimulationApp()
        # (closed by close() only: the app also stops when INTERNUTOPIA_MAX_STEPS runs out or a
        # script calls simulation_app.close(), and the world must still be released then)
        self._closed = False
        max_steps = max_steps_from_environ()
        if max_steps is not None:  # (InternUtopia's scripts loop on is_running(): a headless job bounds them)
            self.add_observer(StopAppAfter(self._app, max_steps))
        self._viewer: Viewer | None = None
        self._first_reset = True
        self._runners: RunnerSet = self._make_runners(config, episodes)
        self._env_num = self._runners.env_num
        if isinstance(self._runners, LocalRunners):
            self._runners.runner.simulation_app = self._app  # InternUtopia's env.runner.simulation_app
            self._runners.runner.task_config_manager = self.task_config_manager
        # The step path calls the runners' own step: no call in between. A local runner also
        # gives InternUtopia's flags itself (from its arrays, not per slot).
        self._step = self._runners.step
        self._step_internutopia = (functools.partial(self._runners.runner.step, flags='internutopia')
                                   if isinstance(self._runners, LocalRunners) else None)
        if not config.simulator.headless and isinstance(self._runners, LocalRunners):
            from internutopia.core.util import has_display

            if has_display():
                self._viewer = open_viewer(self._runners.runner)

    def _make_runners(self, config: Config, episodes: Iterable[TaskCfg] | None) -> RunnerSet:
        """The runners this env drives (one local runner, with InternUtopia's runner members; an
        adapter's env class makes its own)."""
        return LocalRunners(config, episodes, UpstreamRunner)

    # ------------------------------------------------------------------------------------------
    @property
    def env_num(self) -> int:
        """Number of env slots."""
        return self._env_num

    @property
    def config(self) -> Config:
        """The env's own copy of the config it was built from (read-only by convention)."""
        return self._config

    @property
    def runner(self) -> Runner:
        """The runner behind this env (world, slots, groups), for tools and tests."""
        return self._runners.runner  # type: ignore[attr-defined]  # LocalRunners; adapters override

    @property
    def active_slots(self) -> list[int]:
        """Slots currently running an episode."""
        return self._runners.active_slots()

    def get_observations(self) -> list[Any]:
        """The current observation of every slot (a list of ``env_num``; ``None`` where no episode runs).

        Reads the state the last :meth:`step` or :meth:`reset` reached, without stepping.
        """
        self._check_open()
        return self._runners.observe(list(range(self.env_num)))

    def warm_up(self, steps: int = 10, render: bool = True, physics: bool = True) -> None:
        """Let the world settle before the episodes run (InternUtopia's ``warm_up``).

        ``physics=True`` advances the physics ``steps`` times with no commands; robots keep their
        own balance (G1's policy runs) and tasks, metrics and step counts do not see these steps.
        ``physics=False`` only renders in InternUtopia (Isaac Sim's renderer needs frames to warm
        up); MuJoCo's renderer needs none, so it changes nothing here.

        Raises:
            ValueError: ``steps < 1``, or both ``render`` and ``physics`` are ``False``.
        """
        self._check_open()
        check_warm_up(steps, render, physics)
        if self._first_reset:
            raise RuntimeError('call reset() before warm_up()')
        if physics:
            self._runners.warm_up(steps)
            if self._viewer is not None:
                self._viewer = synced_viewer(self._viewer)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError('this Env is closed')
        if not self._app.is_running():
            raise RuntimeError(f'this Env has stopped: its simulation_app was closed ({MAX_STEPS_ENV} steps ran out, '
                               'or simulation_app.close() was called); call env.close() to release it')

    # ------------------------------------------------------------------------------------------
    def reset(self, reset_list: list[int] | None = None, env_ids: list[int] | None = None, *,
              observe: bool = True) -> tuple[list[Any], list[Any]]:
        """Give the listed slots (all slots when ``None``) the next episodes from the queue.

        ``env_ids`` is InternUtopia's name of ``reset_list``: ``reset([3, 0])`` and
        ``reset(env_ids=[3, 0])`` are the same call.

        Returns ``(obs, info)``, lists aligned to ``reset_list``: ``obs[k]`` and ``info[k]``
        (the episode's ``TaskCfg``) belong to slot ``reset_list[k]``, ``None`` where the queue ran out.
        ``observe=False`` skips building the per-slot observation dicts (``obs`` entries may then
        be ``None``): for a caller that reads them as arrays, ``runner.observe_arrays(slots)``.
        Observers added with :meth:`add_observer` get them either way.

        Raises:
            ValueError: an id is not an int in ``range(env_num)`` or appears twice, or both
                ``reset_list`` and ``env_ids`` are given; nothing changes.
        """
        self._check_open()
        slots = reset_slots(reset_list, env_ids, self.env_num)
        # Ctrl-C held for the whole reset, its bookkeeping and its observers (raised once all are
        # done): a reset is never half-recorded here while its slots took their episodes, and every
        # reset that happened reaches the observers (a recording's episode boundaries).
        with held_interrupts():
            try:
                obs, info = self._runners.reset(slots, observe or bool(self._observers))
            except Exception as exc:
                if step_result_of(exc) is not None:  # (complete: an episode_errors='raise' error after it)
                    self._first_reset = False  # (the episodes that started run: the env steps on)
                    if self._observers:
                        every, configs = self.get_observations(), self.active_task_configs
                        notify_observers(self._observers, 'on_reset', slots, [every[slot] for slot in slots],
                                         [configs.get(slot) if every[slot] is not None else None for slot in slots])
                raise
            self._first_reset = False
            if self._observers:
                notify_observers(self._observers, 'on_reset', slots, obs, info)
        return obs, info

    def reset_arrays(self, reset_list: list[int] | None = None, *,
                     observe_only: ObservedEntries | None = None) -> tuple[dict[str, Any] | None, list[Any]]:
        """:meth:`reset` for the array API: the observation as :meth:`step_arrays` gives it.

        Returns ``(obs, info)``: ``obs[robot_name]`` is the robot's observation tree of
        ``(env_num, ...)`` arrays whose rows of the listed slots that got an episode hold their
        first observation (other rows are zeros; ``{}`` when no slot got one), or ``None`` when a
        robot or task in use is upstream-style (per-slot dicts only: read them with
        :meth:`get_observations`); ``info`` is :meth:`reset`'s, aligned to ``reset_list``.
        ``observe_only``: see :meth:`step_arrays`. Observers (:meth:`add_observer`) that take the
        array API's calls see it (a recording's episode boundaries).

        A slot whose first observation raises (a sensor's or a task's error) has an episode that
        failed to start: back to the queue while it has tries left (``Config.episode_attempts``),
        else recorded as failed; the slot takes the next episode, and every other slot is
        untouched. :meth:`reset` does the same.

        >>> from internutopia.core.config import Config
        >>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
        >>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
        >>> task = FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.05))])
        >>> env = Env(Config(env_num=3, metrics_save_path='none', task_configs=[task] * 2))
        >>> obs, info = env.reset_arrays()
        >>> obs['jetbot']['position'].shape, [i is None for i in info]
        ((3, 3), [False, False, True])
        >>> obs['jetbot']['position'][:, 2].round(3).tolist()  # (the empty slot's row: zeros)
        [0.085, 0.085, 0.0]
        >>> env.close()

        Raises:
            ValueError: as :meth:`reset`; nothing changes.
            NotImplementedError: an adapter's env without the array API (Ray).
        """
        self._check_open()
        slots = reset_slots(reset_list, None, self.env_num)
        with held_interrupts():  # (as reset: never half-recorded)
            try:
                obs, info = self._runners.reset_arrays(slots, observe_only)
            except Exception as exc:
                if step_result_of(exc) is not None:  # (complete: an episode_errors='raise' error after it)
                    self._first_reset = False
                    notify_observers(self._array_observers, 'on_reset_arrays', slots, None, None)
                raise
            self._first_reset = False
            if self._array_observers:
                notify_observers(self._array_observers, 'on_reset_arrays', slots, obs, info)
        return obs, info

    def step(self, action: list[Any], *, flags: str = 'internutopia') -> tuple[list, list, list, list, list]:
        """Advance every slot by one physics step.

        Args:
            action: a list of ``env_num`` entries, each ``{robot_name: {controller_name: args}}``
                or ``None``/``{}``; entries of slots that are not running an episode are ignored,
                and so are commands for robots a slot's episode does not have (warned once per name).
            flags: how episode ends are reported. ``'internutopia'`` (default, as InternUtopia's
                loops expect): ``terminated[i]`` is ``True`` on the step an episode ends, whatever
                ended it, ``truncated[i]`` also ``True`` when a step limit ended it, and
                ``terminated[i]`` stays ``True`` for a slot with no running episode (done or
                empty), so ``all(terminated)`` tells that nothing runs. ``'gymnasium'``: a step
                limit is ``truncated`` only, and slots without a running episode get ``None``.

        Returns:
            ``(obs, reward, terminated, truncated, info)``, lists of length ``env_num``; ``obs``,
            ``reward``, ``truncated`` and ``info`` are ``None`` for done and empty slots.

        Raises:
            ValueError: wrong length, or an unknown robot/controller name or bad arguments for an
                active slot; raised before anything is stepped.
        """
        self._check_open()
        if self._first_reset:
            raise RuntimeError('call reset() before step()')
        check_action_list(action, self.env_num)
        if self._observers:
            # Ctrl-C held over the step and its observers (the runner's guard raises a held one
            # only when nothing else holds it): the step it interrupted still reaches them (a
            # recording's frames and episode ends), and none of them is cut off halfway.
            with held_interrupts():
                try:
                    result = self._step_flagged(action, flags)
                except Exception as exc:
                    done = step_result_of(exc)  # (a step that was complete: episode_errors='raise')
                    if done is not None:
                        notify_observers(self._observers, 'on_step', action, done)
                    raise
                notify_observers(self._observers, 'on_step', action, result)
            return result
        return self._step_flagged(action, flags)

    def _step_flagged(self, action: list[Any], flags: str) -> tuple[list, list, list, list, list]:
        """:meth:`step` itself: the runners' step, its flags as asked, the viewer synced."""
        if flags == 'internutopia':
            step = self._step_internutopia
            if step is not None:
                result = step(list(action))
            else:
                try:
                    result = internutopia_flags(self._step(list(action)))
                except Exception as exc:  # (a complete step that episode_errors='raise' raised after: its flags too)
                    carried = step_result_of(exc)
                    if carried is not None:
                        setattr(exc, STEP_RESULT_ATTRIBUTE, internutopia_flags(carried))
                    raise
        elif flags == 'gymnasium':
            result = self._step(list(action))
        else:
            raise ValueError(f"flags must be 'internutopia' or 'gymnasium'; got {flags!r}")
        if self._viewer is not None:
            self._viewer = synced_viewer(self._viewer)
        return result

    def step_arrays(self, action: dict[str, dict[str, Any]], *, array_backend: str = 'numpy',
                    observe: bool = True, observe_only: ObservedEntries | None = None, repeat: int = 1,
                    reset_list: list[int] | None = None) -> ArrayStep:
        """Advance every slot by one physics step, with batched actions and array results.

        The fast path for training loops: no per-env dicts in or out.

        Args:
            action: ``{robot_name: {controller_name: args}}`` where ``args`` has one row per env
                slot (an array of shape ``(env_num, ...)``, or a list of ``env_num`` entries);
                rows of slots that are not active are ignored. Controllers not named get no
                command this step.
            array_backend: ``'numpy'``, ``'torch'`` or ``'warp'``: the library of the result's
                arrays, on the backend's device (``SimConfig.device`` on ``warp``, else the CPU).
                On the CPU they share the numpy results' memory; on a GPU each is copied there
                once (see ``docs/backend.md``). :meth:`state_arrays` gives the physics state
                itself without a copy.
            observe: ``False`` observes only the slots whose episode ended on this step (the
                others' rows are zeros; ``obs`` is ``{}`` when none ended): for a loop that
                repeats an action and reads the last step's observation only. Ignored while an
                observer of the array API is added (a ``Recorder``: its frames need every row).
            observe_only: the entries of ``obs`` the caller reads, ``{top_level_key: children}``
                (a robot's name or a task observation's key; ``children`` a set of the names
                under it to keep, or ``None`` for all of it): the others are left out of ``obs``
                and not gathered (a Gymnasium vector env passes its observation keys). ``None``
                (the default): everything.
            repeat: physics steps with these actions (an action repeat, default 1), returned as
                one result: rewards summed over the steps each slot ran; an episode that ends on
                an inner step ends there, with that step's flags, metrics and final observation,
                and is not stepped again; the other slots' observation is the last step's. Steps
                on which nothing but the physics runs are one physics call, as is a repeat whose
                tasks read its steps afterwards (docs/extensions.md: "quiet physics steps fused",
                "an action repeat in one recorded call"). Ctrl-C lands between physics calls. ``observe`` is ignored when ``repeat > 1`` (only the
                ended slots are observed on the inner steps).
            reset_list: slots whose episode has ended (or that hold none) to start their next
                episodes after the step, as ``reset_arrays(reset_list)`` would right after it, but
                observed in the same pass as the step's slots: their rows of ``obs`` hold their
                first observation and ``started`` lists the new episodes' task configs in
                ``reset_list``'s order (``None`` where the queue ran out). For an autoreset loop:
                one call where a step and a reset took two. ``observe`` is ignored with it.

        Returns:
            an :class:`~internutopia.core.runner.ArrayStep`: ``obs[robot_name]`` is the robot's
            observation tree with ``(env_num, ...)`` arrays, ``reward``/``terminated``/
            ``truncated``/``active`` are ``(env_num,)`` arrays, ``metrics`` maps each slot whose
            episode ended on this step to its metrics.

        Raises:
            ValueError: unknown robot or controller, wrong row count, bad values, a ``reset_list``
                id out of range, repeated or running an episode; nothing moves.

        >>> import numpy as np
        >>> from internutopia.core.config import Config
        >>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
        >>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
        >>> task = FiniteStepTaskCfg(max_steps=100, robots=[JetbotRobotCfg()])
        >>> env = Env(Config(env_num=4, metrics_save_path='none', task_configs=[task] * 4))
        >>> _ = env.reset()
        >>> out = env.step_arrays({'jetbot': {'move_by_speed': np.tile([0.3, 0.0], (4, 1))}})
        >>> out.obs['jetbot']['position'].shape, out.reward.shape, bool(out.active.all())
        ((4, 3), (4,), True)
        >>> env.close()
        """
        self._check_open()
        if self._first_reset:
            raise RuntimeError('call reset() before step_arrays()')
        if array_backend != 'numpy':
            check_array_backend(array_backend)
        restart: list[int] | None = None
        if reset_list is not None:
            restart = check_reset_list(reset_list, self.env_num)
            running = sorted(set(restart).intersection(self._runners.active_slots()))
            if running:
                raise ValueError(f'reset_list: env(s) {running} are running episodes; step_arrays(reset_list=...) '
                                 'starts slots whose episode has ended or that hold none (reset() starts any slot)')
        if self._array_observers:  # (Ctrl-C held over the call and its observers, as step does)
            with held_interrupts():
                try:  # (every slot observed: a recording's frames need them)
                    result = self._runners.step_arrays(action, True, observe_only, repeat, restart)
                except Exception as exc:
                    done = step_result_of(exc)  # (a step that was complete: episode_errors='raise')
                    if done is not None:
                        notify_observers(self._array_observers, 'on_step_arrays', action, done, repeat, restart)
                    raise
                notify_observers(self._array_observers, 'on_step_arrays', action, result, repeat, restart)
        elif restart is not None:
            result = self._runners.step_arrays(action, observe, observe_only, repeat, restart)
        elif observe_only is None and type(repeat) is int and repeat == 1:
            result = self._runners.step_arrays(action) if observe else self._runners.step_arrays(action, observe=False)
        else:
            result = self._runners.step_arrays(action, observe, observe_only, repeat)
        if self._viewer is not None:
            self._viewer = synced_viewer(self._viewer)
        if array_backend != 'numpy':
            result = convert_step(result, array_backend, self.array_device)
        return result

    def close(self) -> None:
        """Release the world and stop ``simulation_app``; further calls raise ``RuntimeError``."""
        with held_interrupts():  # a Ctrl-C during close is raised once everything is released
            if self._closed:
                return
            # (a step or reset running in another thread: a RuntimeError naming it, nothing released)
            with self._runners.guard.enter('close'):
                observed: Exception | None = None
                try:  # (an observer that raises keeps neither the others nor the release from the close)
                    notify_observers(self._observers, 'on_close')
                except Exception as exc:  # noqa: BLE001 - raised once everything is released
                    observed = exc
                try:
                    if self._viewer is not None:
                        self._viewer.close()
                        self._viewer = None
                    self._runners.close()
                finally:  # (closed even when a release raises: a second close never releases twice)
                    self._closed = True
                    self._app.close()
            if observed is not None:
                raise observed

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
