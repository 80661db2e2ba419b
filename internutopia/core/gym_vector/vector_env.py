"""The ``gymnasium.vector.VectorEnv`` whose sub-environments are the slots of one internutopia world."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from internutopia.core.backend.arrays import check_array_backend, convert_tree
from internutopia.core.config import Config, TaskCfg
from internutopia.core.episode_queue import Episode, EpisodeQueue
from internutopia.core.gym_vector.actions import ActionLayout
from internutopia.core.gym_vector.arguments import check_action_repeat, parse_autoreset_mode, reset_mask, resolve_config
from internutopia.core.gym_vector.episodes import (
    EpisodeSource,
    _queue_seed,
    _seed_generator,
    check_episode_list,
    check_robot,
    check_started,
    pick_robot,
    unseeded_env,
)
from internutopia.core.gym_vector.features import _NOT_FOUND, ObsLayout
from internutopia.core.gym_vector.infos import add_env_infos
from internutopia.core.gym_vector.obs_rows import ObservationRows
from internutopia.core.gym_vector.slot_view import SlotView
from internutopia.core.runner.guard import held_interrupts
from internutopia.core.vec_env import Env as InternVecEnv

__all__ = ['SlotView', 'VectorEnv']  # SlotView lives in slot_view.py; this module's path of it is kept

class VectorEnv(gym.vector.VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` whose sub-environments are the slots of one ``vec_env.Env``.

    Args:
        config: a :class:`~internutopia.core.config.Config` or the path of a YAML config. It is
            never modified; ``num_envs`` overrides its ``env_num`` in a copy.
        num_envs: number of sub-environments (default ``config.env_num``).
        episodes: the episode source (see :class:`EpisodeSource`); default ``config.task_configs``,
            cycled. Every episode must have one robot (or name the robot with ``robot=``) with the
            same controllers and observation layout.
        robot: the robot the spaces are built for (default: the episode's only robot).
        controller: the controller the action drives (default ``move_by_speed`` when the robot has
            it, else its first controller with a known action space), or a list of controllers
            whose actions are concatenated into one ``Box`` in that order (e.g.
            ``['arm_ik_controller', 'gripper_controller']``: an arm pose and a gripper command).
        obs_mode: ``'flat'`` (one ``float32`` ``Box``) or ``'dict'`` (a ``Dict`` keyed by ``obs_keys``).
        obs_keys: which observations (see :class:`ObsLayout`); default :meth:`ObsLayout.default_keys`.
        action_repeat: physics steps per ``step()`` with the same action (rewards are summed; an
            episode that ends on an inner step ends there). ``1`` = InternUtopia's one step.
        action_space: override the controller's action space (a ``Box`` of its argument shape).
        autoreset_mode: Gymnasium's ``AutoresetMode`` (or its value): ``NEXT_STEP`` (default),
            ``SAME_STEP`` or ``DISABLED``.
        render_mode: ``None`` or ``'rgb_array'`` (a frame per env; :meth:`render_overview` for the grid).
        array_backend: ``'numpy'`` (default), ``'torch'`` or ``'warp'``: the library of the
            observations, rewards, terminations and truncations ``reset``/``step`` return, on the
            backend's device (:attr:`array_device`); sharing the numpy arrays' memory on the CPU,
            copied there once on a GPU. Actions may be numpy, torch or Warp arrays either way;
            infos stay numpy.

    Actions outside the action space are clipped to it.
    """

    metadata = {'render_modes': ['rgb_array'], 'autoreset_mode': AutoresetMode.NEXT_STEP}
    #: The controller's arguments of one sub-environment (always a ``Box``).
    single_action_space: spaces.Box

    def __init__(self, config: Config | str | os.PathLike[str], *, num_envs: int | None = None,
                 episodes: Any = None, robot: str | None = None, controller: str | Sequence[str] | None = None,
                 obs_mode: str = 'flat', obs_keys: Sequence[str] | None = None, action_repeat: int = 1,
                 action_space: spaces.Box | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 render_mode: str | None = None, array_backend: str = 'numpy') -> None:
        config = resolve_config(config, num_envs)
        self.array_backend = check_array_backend(array_backend)
        if obs_mode not in ('flat', 'dict'):
            raise ValueError(f"obs_mode must be 'flat' or 'dict'; got {obs_mode!r}")
        action_repeat = check_action_repeat(action_repeat)
        if render_mode not in (None, 'rgb_array'):
            raise ValueError(f"render_mode must be None or 'rgb_array'; got {render_mode!r}")
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, 'autoreset_mode': self.autoreset_mode,
                         'render_fps': 1.0 / (config.simulator.physics_dt * action_repeat)}
        self.render_mode = render_mode
        self.num_envs = config.env_num
        self.obs_mode = obs_mode
        self.action_repeat = action_repeat
        self.closed = False
        self._source = EpisodeSource(episodes, config.task_configs, endless=True)
        if self._source.listed is not None:  # (each one now, not at the autoreset that reaches it)
            check_episode_list(self._source.listed, robot, 'task_configs' if episodes is None else 'episodes')
        self._vec = unseeded_env(InternVecEnv, config, self._source)
        try:
            self._check_drawn_episodes()
            obs, info = self._vec.reset()
            check_started(list(range(self.num_envs)), info)
            self.robot_name = pick_robot(info[0], robot)
            for slot, task in enumerate(info):
                check_robot(slot, task, self.robot_name)
            robot_group = self._vec.runner.slot_robots[0][self.robot_name]
            #: The action: the controllers it drives, its space, the commands made from it.
            self.action_layout = ActionLayout(self.robot_name, robot_group, controller, self._vec, action_space)
            #: The controllers the action drives (each one's slice of the action: ``action_layout.slices``).
            self.controller_names = self.action_layout.controller_names
            self.controller_name = self.action_layout.controller_name
            self.layout = ObsLayout(obs[0], self.robot_name, obs_keys)
            #: The entries of the array observation the layout reads (the others are not gathered).
            self._observe_only = self.layout.observed_entries()
            for slot in range(1, self.num_envs):
                self.layout.check(obs[slot], slot)
        except BaseException:
            self._vec.close()
            raise
        self.single_action_space = self.action_layout.space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = self.layout.flat_space() if obs_mode == 'flat' else self.layout.dict_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        #: The observation rows of every env (flat ``(num_envs, D)`` or a dict of ``(num_envs, ...)``
        #: arrays): what ``reset``/``step`` return a copy of.
        self._rows = ObservationRows(self.layout, obs_mode, list(obs))
        self._episode_index = np.array([e.index if e is not None else -1 for e in self._vec.runner.episodes], dtype=int)
        #: Step through ``vec_env.Env.step_arrays`` (batched arrays end to end) when the layout and
        #: every robot and task allow it; else through per-slot dicts.
        self.array_path = self.layout.rows_ready
        #: On the array path in ``NEXT_STEP`` mode, the envs whose episodes ended start their next
        #: ones in the step's own call (``step_arrays(reset_list=...)``: one observation of the world
        #: for both). Not with ``episode_errors='raise'``, whose error would come after they started.
        self._start_in_step = self.autoreset_mode == AutoresetMode.NEXT_STEP and config.episode_errors != 'raise'
        self._ended_infos: dict[int, dict[str, Any]] = {}
        self._ended = np.zeros(self.num_envs, dtype=bool)
        #: Set when a step or reset raised before its books were complete (an error, or a
        #: ``KeyboardInterrupt`` raised by code): the next step books the envs that run no episode
        #: as ended (:meth:`_book_idle_envs`), so they start their next ones instead of freezing.
        self._unbooked = False
        self._every_env = np.arange(self.num_envs)  # (rows of every env, in order)
        self._every_env.flags.writeable = False
        self._fresh: list | None = list(info)  # the episodes of the construction-time reset
        self._views = [SlotView(self, i) for i in range(self.num_envs)]
        #: Where the returned arrays live (``'cpu'``, or ``'cuda:N'`` on the ``warp`` backend on a GPU).
        self.array_device = self._vec.array_device

    def _check_drawn_episodes(self) -> None:
        """Have the runner check that each episode it takes from the source has this env's robot,
        so that one without it fails to load (the step or reset raises before anything changes;
        after ``Config.episode_attempts`` tries it is recorded as failed and skipped) instead of
        starting in a slot the spaces do not fit. (Where the runners live elsewhere, Ray's,
        :meth:`_note_started` finds it after the start.)"""
        try:
            starts = self._vec.runner.starts
        except AttributeError:
            return

        def has_robot(task: TaskCfg, where: str) -> None:
            robot = getattr(self, 'robot_name', None)  # (set by the first reset, whose episodes are checked there)
            if robot is not None:
                check_robot(where, task, robot)

        starts.episode_checks.append(has_robot)

    # -- properties ----------------------------------------------------------------------------
    @property
    def vec_env(self) -> InternVecEnv:
        """The ``vec_env.Env`` underneath (one world, ``num_envs`` slots)."""
        return self._vec

    @property
    def config(self) -> Config:
        """The config the world was built from."""
        return self._vec.config

    @property
    def obs_keys(self) -> list[str]:
        """The observation keys, in the order of the flat vector."""
        return list(self.layout.keys)

    # -- observations and infos ----------------------------------------------------------------
    @staticmethod
    def _reset_info(task: TaskCfg, index: int) -> dict[str, Any]:
        return {'episode_index': index, 'task_config': task}

    def _take(self, slots: list[int]) -> list[dict[str, Any]]:
        """Reset ``slots`` in ``vec_env``; update cached obs; return their reset infos.

        On the array path the new episodes' rows come from the array observation (as a step's
        do), not from per-slot dicts: a reset costs no per-env Python but its bookkeeping."""
        arrays = self.array_path and self._arrays_allowed()
        tree: dict[str, Any] | None = None
        if arrays:
            tree, info = self._vec.reset_arrays(slots, observe_only=self._observe_only)
        else:
            obs, info = self._vec.reset(slots)
        out = self._note_started(slots, info)
        if tree is not None:
            self._rows.write_started(np.asarray(slots, dtype=np.intp), tree)
        else:
            if arrays:  # observed after all, per slot
                every = self._vec.get_observations()
                obs = [every[slot] for slot in slots]
            for slot, o in zip(slots, obs, strict=True):
                self.layout.check(o, slot)
            self._rows.set_from_dicts(slots, list(obs))
        return out

    def _note_started(self, slots: list[int], info: list[Any]) -> list[dict[str, Any]]:
        """Books of ``slots``, which just started the episodes ``info`` (their task configs): each
        runs again and has its episode index; their reset infos. Every slot must have got an
        episode with this env's robot (``RuntimeError``, ``ValueError``)."""
        check_started(slots, info)
        episodes = self._vec.runner.episodes
        out = []
        for slot, task in zip(slots, info, strict=True):
            check_robot(slot, task, self.robot_name)
            self._ended[slot] = False
            episode = episodes[slot]
            assert episode is not None  # check_started: every slot got one
            self._episode_index[slot] = episode.index
            out.append(self._reset_info(task, episode.index))
        return out

    def _add_infos(self, infos: dict[str, Any], slots: list[int], slot_infos: list[dict[str, Any]]) -> dict[str, Any]:
        """``infos`` with ``slot_infos`` (one per slot of ``slots``) added: what Gymnasium's
        ``_add_info`` gives slot by slot, each column and mask written once for all the slots."""
        return add_env_infos(infos, slots, slot_infos, self.num_envs, self._add_info) if slots else infos

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-environment, or those of ``options['reset_mask']``.

        ``seed`` (an int, or a list of ints, one per env) seeds :attr:`np_random` and restarts the
        episode source, so the same seed gives the same episodes. ``options['reset_mask']``, a
        ``bool`` array of shape ``(num_envs,)``, resets only those envs; the others keep their
        observation. Info: ``episode_index`` and ``task_config`` of the envs that were reset.
        """
        self._check_open()
        if isinstance(seed, (list, tuple)) and len(seed) != self.num_envs:
            raise ValueError(f'If seeds are passed as a list the length must match num_envs={self.num_envs} '
                             f'but got length={len(seed)}.')
        mask = reset_mask(options, self.num_envs)
        episodes_rng = _seed_generator(seed) if seed is not None else None  # (checks seed: nothing is seeded by a bad one)
        # Ctrl-C held over the reset and its books (raised once both are done): the envs that got
        # their episodes are booked as running them, whether or not the return reaches the caller.
        with held_interrupts():
            try:
                if seed is not None:
                    assert episodes_rng is not None
                    first = seed if isinstance(seed, (int, np.integer)) else next((s for s in seed if s is not None), None)
                    super().reset(seed=None if first is None else int(first))
                    self._restart_source(episodes_rng, _queue_seed(seed))
                slots = list(range(self.num_envs)) if mask is None else [int(i) for i in np.flatnonzero(mask)]
                if self._fresh is not None and seed is None and mask is None and not self._vec.observed:
                    # The construction-time reset already started these episodes: hand them out
                    # (taken again when a tool watches the env since, a Recorder: it sees them start).
                    episodes = cast('list[Episode]', self._vec.runner.episodes)  # check_started: every slot got one
                    infos = [self._reset_info(task, episodes[slot].index) for slot, task in enumerate(self._fresh)]
                else:
                    infos = self._take(slots)
                self._fresh = None
                info = self._add_infos({}, slots, infos)
                obs = self._rows.batch()
            except BaseException:
                self._unbooked = True
                raise
        return convert_tree(obs, self.array_backend, self.array_device), info

    def _restart_source(self, rng: np.random.Generator, queue_seed: int) -> None:
        if self._source.restartable:
            self._vec.runner.queue = EpisodeQueue(self._source.stream(rng), seed=queue_seed)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply ``actions`` (shape ``(num_envs, *single_action_space.shape)``) for ``action_repeat`` physics steps.

        Returns batched ``(obs, rewards, terminations, truncations, info)``; see the class and
        module docs for what happens to envs whose episodes end in each autoreset mode.
        """
        self._check_open()
        if self._fresh is not None:
            raise RuntimeError('call reset() before step()')
        actions = self.action_layout.check(actions, self.num_envs)
        if self._unbooked:
            self._book_idle_envs()
        if self.autoreset_mode == AutoresetMode.DISABLED and self._ended.any():
            ended_ids = [int(i) for i in np.flatnonzero(self._ended)]
            raise RuntimeError(f'env(s) {ended_ids} ended their episodes; with autoreset_mode=DISABLED call '
                               "reset(options={'reset_mask': mask}) for them before the next step()")
        # Ctrl-C held over the whole step, its autoresets and its books (raised once all are done):
        # an interrupted step is complete, only its return is lost, and the next step goes on from
        # it as the autoreset mode says (docs/gymnasium.md, "Ctrl-C").
        with held_interrupts():
            try:
                obs, rewards, terminated, truncated, infos = self._step(actions)
            except BaseException:
                self._unbooked = True  # (books left halfway: the next step mends them)
                raise
        obs, rewards, terminated, truncated = convert_tree((obs, rewards, terminated, truncated),
                                                           self.array_backend, self.array_device)
        return obs, rewards, terminated, truncated, infos

    def _book_idle_envs(self) -> None:
        """Book every env whose slot runs no episode as ended (after a step or reset that raised
        before its books were complete): it starts its next episode on this step (``NEXT_STEP``,
        ``SAME_STEP``) or must be reset (``DISABLED``), instead of being stepped as if it ran."""
        idle = np.ones(self.num_envs, dtype=bool)
        idle[self._vec.active_slots] = False
        self._ended |= idle
        self._unbooked = False

    def _step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """:meth:`step` after its checks: the physics steps, the autoresets, the books."""
        # (NEXT_STEP's envs that ended on the last step; in SAME_STEP mode, envs whose autoreset
        # raised there: each starts its next episode now, as NEXT_STEP does)
        to_reset = self._ended.nonzero()[0]
        live = ~self._ended
        if not live.any():  # (every env starts its next episode: none steps, and the world's clock stays)
            rewards, terminated, truncated, infos = self._idle_step()
        elif self.array_path and self._arrays_allowed():
            if len(to_reset) and self._start_in_step:
                rewards, terminated, truncated, infos = self._step_arrays(actions, live, to_reset.tolist())
                to_reset = to_reset[:0]  # (started in the step's call)
            else:
                rewards, terminated, truncated, infos = self._step_arrays(actions, live)
        else:
            rewards, terminated, truncated, infos = self._step_dicts(actions, live)
        ended = terminated | truncated
        # (the envs still to start an episode, kept before each start that may raise: an episode
        # that does not load leaves them to start on the next step, never running none unseen)
        self._ended = ended.copy()
        self._ended[to_reset] = True
        if self.autoreset_mode == AutoresetMode.SAME_STEP and ended.any():
            slots = [int(i) for i in np.flatnonzero(ended)]
            for slot in slots:
                infos = self._add_info(infos, {'final_obs': self._rows.single(slot),
                                               'final_info': self._final_info(slot)}, slot)
            infos = self._add_infos(infos, slots, self._take(slots))
            ended[:] = False
            self._ended[slots] = False
        if len(to_reset):
            slots = to_reset.tolist()
            infos = self._add_infos(infos, slots, self._take(slots))
        self._ended = ended
        return self._rows.batch(), rewards, terminated, truncated, infos

    def _idle_step(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """A step in which no env runs an episode (``NEXT_STEP``'s step after every env ended):
        no physics, as Gymnasium's autoreset asks, so the episodes start at the time they would
        in ``SAME_STEP`` mode and run the same (a walking policy's ticks keep their phase)."""
        self._ended_infos = {}
        return np.zeros(self.num_envs), np.zeros(self.num_envs, dtype=bool), np.zeros(self.num_envs, dtype=bool), {}

    def _arrays_allowed(self) -> bool:
        """Whether every robot and task of the running episodes has the array API (an upstream-style,
        per-slot extension steps through per-slot dicts)."""
        runner = getattr(self._vec, 'runner', None)
        return runner is not None and runner.observer.arrays_ready()

    def _step_dicts(self, actions: np.ndarray, live: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """``action_repeat`` physics steps through ``vec_env.Env.step`` (per-slot dicts)."""
        n = self.num_envs
        live = live.copy()
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=np.bool_)
        truncated = np.zeros(n, dtype=np.bool_)
        step_info: list[dict | None] = [None] * n
        slot_obs: dict[int, dict] = {}
        commands = self.action_layout.slot_commands(actions, np.flatnonzero(live), self.num_envs)
        for _repeat in range(self.action_repeat):
            obs, reward, term, trunc, info = self._vec.step(commands, flags='gymnasium')
            for row in np.flatnonzero(live):
                slot_obs[int(row)] = obs[row]
                rewards[row] += reward[row]
                step_info[row] = info[row]
                if term[row] or trunc[row]:
                    terminated[row], truncated[row] = term[row], trunc[row]
                    live[row] = False
                    commands[row] = None
            if not live.any():
                break
        self._rows.set_from_dicts(list(slot_obs), list(slot_obs.values()))
        same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        ended = terminated | truncated
        self._ended_infos = {slot: info for slot, info in enumerate(step_info) if info is not None and ended[slot]}
        infos: dict[str, Any] = {}
        for slot in range(n):
            slot_info = step_info[slot]
            if slot_info is not None and not (same_step and ended[slot]):
                infos = self._add_info(infos, slot_info, slot)
        return rewards, terminated, truncated, infos

    def _step_arrays(self, actions: np.ndarray, live: np.ndarray, restart: list[int] | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """``action_repeat`` physics steps in one ``vec_env.Env.step_arrays(repeat=...)``: the same
        results as :meth:`_step_dicts` from batched arrays, with no per-env Python but for envs
        whose episode ended. ``restart``: envs whose episodes ended on the last step, started in
        the same call (``reset_list``), their reset infos added as :meth:`_take`'s are."""
        commands = self.action_layout.batched_commands(actions, self.num_envs)
        out = self._vec.step_arrays(commands, observe_only=self._observe_only, repeat=self.action_repeat, reset_list=restart)
        rows = live.nonzero()[0]  # (the envs that ran: each has its final or last observation)
        if restart is not None:
            reset_infos = self._note_started(restart, cast('list[Any]', out.started))
            # (NEXT_STEP's envs that ran, ``live``, and those that started, the others, are every env)
            assert len(rows) + len(restart) == self.num_envs
            try:  # (the new episodes' first observations with the others': one pass)
                self._rows.write(out.obs, self._every_env)
            except (ValueError, KeyError, IndexError):
                self._rows.write(out.obs, rows)  # (the step's rows raise as a step's do)
                self._rows.write_started(np.asarray(restart, dtype=np.intp), out.obs)  # (a new episode that does not fit: named)
        elif len(rows):
            self._rows.write(out.obs, rows)
        if len(rows) == self.num_envs:  # (every env ran: the result's arrays are this step's own)
            rewards, terminated, truncated = out.reward, out.terminated, out.truncated
        else:
            rewards = np.where(live, out.reward, 0.0)
            terminated, truncated = out.terminated & live, out.truncated & live
        ended = terminated | truncated
        steps = self._vec.runner.steps
        extras: dict[int, dict[str, Any]] = {}
        for slot in ended.nonzero()[0].tolist():
            extra = extras[slot] = {}
            if slot in out.metrics:
                extra['metrics'] = out.metrics[slot]
            if slot in out.diverged:
                extra['diverged'] = True
            if slot in out.failed:
                extra['failed'] = out.failed[slot]
        with_info = live & ~ended if self.autoreset_mode == AutoresetMode.SAME_STEP else live
        self._ended_infos = {slot: {'episode_index': int(self._episode_index[slot]), 'steps': int(steps[slot]), **extra}
                             for slot, extra in extras.items()}
        infos: dict[str, Any] = {}
        if with_info.any():
            for key, values in (('episode_index', self._episode_index), ('steps', steps)):
                infos[key], infos[f'_{key}'] = np.where(with_info, values, 0), with_info.copy()
            added = [(slot, extra) for slot, extra in sorted(extras.items()) if with_info[slot] and extra]
            infos = self._add_infos(infos, [slot for slot, _ in added], [extra for _, extra in added])
        if restart is not None:
            infos = self._add_infos(infos, restart, reset_infos)
        return rewards, terminated, truncated, infos

    def _final_info(self, slot: int) -> dict[str, Any]:
        """The step info of ``slot`` whose episode ended on this step (``SAME_STEP``'s ``final_info``)."""
        return self._ended_infos[slot]

    # (Gymnasium types a vector env's render as a frame per sub-environment; this one draws them all in one image.)
    def render(self) -> tuple[np.ndarray, ...] | None:
        """With ``render_mode='rgb_array'``: a frame ``uint8 (480, 640, 3)`` per env, as Gymnasium's
        vector envs give (each env's slot alone, ``vec_env.render_envs``); the whole grid in one
        image is :meth:`render_overview`."""
        if self.render_mode == 'rgb_array':
            return tuple(self._vec.render_envs())
        return None

    def render_overview(self, width: int = 640, height: int = 480) -> np.ndarray:
        """One image ``uint8 (height, width, 3)`` of the whole grid, every env in view (``vec_env.render``)."""
        return self._vec.render(width, height)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Per sub-environment: call ``name`` of its :class:`SlotView` (or return it if not callable).

        Names a slot view lacks fall back to this env's (non-callable) attributes, repeated per env.
        """
        results = []
        for view in self._views:
            try:
                value = getattr(view, name)
            except AttributeError:
                value = getattr(self, name, _NOT_FOUND)
                if value is _NOT_FOUND or callable(value):
                    raise AttributeError(f'sub-environments have no attribute {name!r}; they have '
                                         f'{sorted(SlotView._READ_ONLY)} and those set with set_attr') from None
            results.append(value(*args, **kwargs) if callable(value) else value)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """``name`` of every sub-environment (see :class:`SlotView`)."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set ``name`` on every sub-environment's :class:`SlotView`: one value each, or one for all."""
        if not isinstance(values, (list, tuple)):
            values = [values for _ in range(self.num_envs)]
        if len(values) != self.num_envs:
            raise ValueError('Values must be a list or tuple with length equal to the number of environments. '
                             f'Got `{len(values)}` values for {self.num_envs} environments.')
        for view, value in zip(self._views, values, strict=True):
            setattr(view, name, value)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the world."""
        self._vec.close()

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError('this VectorEnv is closed')
