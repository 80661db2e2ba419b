"""``Recorder``: turns any run of a ``vec_env.Env`` into a LeRobot dataset.

Attach one to an env and drive the env as usual; every episode that finishes is saved as one
dataset episode, in the order episodes finish::

    env = Env(config)
    recorder = Recorder('demos/pick_place').attach(env)
    ...  # reset/step as usual: the dict API (env.step) or the array API (env.step_arrays)
    env.close()                     # waits for the last saves; or recorder.close()

It sees what the user saw: the env calls it with each ``reset``'s and ``step``'s results, and
``reset_arrays``'s and ``step_arrays``' (a narrow observer hook of ``vec_env.Env``; nothing below
the env knows it exists), so a Gymnasium vector env (``attach`` takes one) is recorded too. Each slot's
episode is buffered on its own (its per-step rows; its camera frames go straight to a video encoder
on the writer's process) and saved when it ends:

- frame ``t`` of an episode holds the observation the action was chosen from, the action sent
  (as its controllers received it), and the reward and flags of the step it led to (``next.*``);
  an episode of ``n`` steps has ``n`` frames (the final observation is not a frame); a call of
  ``step_arrays(repeat=k)`` (a Gymnasium env's action repeat) is one frame, and the dataset's
  ``fps`` is ``1 / (k * physics_dt)``, ``k`` that of the first recorded step;
- ``run_episode_index`` is the episode's index in the run's queue and results file,
  ``env_slot`` the slot it ran in; ``meta/episodes`` carries both and ``success``;
- an episode abandoned, failed (an error, a diverged simulation), moved out of the recording's
  sight (the runner stepped directly; a step of another ``repeat``), or running before ``attach``
  is never saved (the last two warned); one without success (its ``success`` metric false) is
  dropped unless ``keep_failed=True``, which saves it with ``next.success`` false;
- ``episodes_saved`` and ``saved_run_indices`` count the episodes the writer has saved (on disk:
  every one queued so far after :meth:`Recorder.flush` or :meth:`Recorder.close`); an episode
  whose files could not be written is that episode's loss only: warned about, counted in
  ``saves_failed``, and the recording goes on with the next ones.

The env calls its observers with Ctrl-C held (``vec_env.Env.step``), so a Ctrl-C never lands
between two of the recorder's updates; each update is also ordered so that an exception leaves
it whole: a frame's row is one tuple appended at once, the layout is set once its writer runs,
and an episode an error cut short (it would miss a frame) is dropped, not saved with a gap.

The layout (:mod:`internutopia.recording.layout`) is fixed by the first recorded step, its
``action`` columns by the first that sends a command (the rows before get ``NaN`` actions). An
episode whose robots, state columns or cameras differ from the layout's is skipped with a warning
and counted in ``episodes_dropped`` once (record such runs into separate datasets).

``root`` is claimed when the recorder is made (:func:`~internutopia.recording.files.claim_folder`):
created, and a claim file written in it that another recorder refuses; an unusable ``root`` (under
a file, not writable) is refused then. :meth:`Recorder.close` removes the claim file.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import itertools
import os
import warnings
from typing import Any

import numpy as np

from internutopia.core.util.caller import caller_stacklevel, warn_per_episode
from internutopia.recording.calls import array_step_lists, moved_unseen, started_rows, success_of, task_text, vec_env_of
from internutopia.recording.episode import SlotEpisode
from internutopia.recording.files import claim_folder, import_pyarrow, release_folder
from internutopia.recording.layout import Layout
from internutopia.recording.source import SlotSource, slot_source
from internutopia.recording.video import VideoOptions
from internutopia.recording.writer import DatasetWriter

__all__ = ['Recorder']


class Recorder:
    """Records a ``vec_env.Env`` run into a LeRobot v3.0 dataset at ``root`` (see the module doc).

    Args:
        root: the dataset's folder; it must not exist yet, or be empty (``overwrite=True``
            deletes what is there). It is created and claimed at once (see the module doc).
        keep_failed: also save episodes that ended without success (marked ``next.success`` false).
        video: how camera frames are encoded (:class:`~internutopia.recording.video.VideoOptions`).
        overwrite: replace an existing dataset at ``root`` (not one another running recording claims).

    Attributes:
        episodes_saved: episodes the writer has saved (their files complete and counted).
        saved_run_indices: their ``run_episode_index``, in the order they were saved.
        episodes_dropped: episodes not to be saved (abandoned, failed, without success, not fitting
            the layout) and episodes an error cut short; each counted once, when it ends or is
            abandoned (a ``success`` metric is read as a bool: see :meth:`_success`).
        saves_failed: episodes to be saved whose files could not be written (each one warned about;
            a writer that died loses those not yet saved, counted here at :meth:`close`).

    Raises:
        ImportError: ``pyarrow`` or ``av`` is missing (the ``dataset`` extra).
        TypeError: ``keep_failed`` or ``overwrite`` is not a bool, ``video`` not a ``VideoOptions``.
        FileExistsError: ``root`` holds files and ``overwrite`` is false, or another recording that
            may still run claims it.
        OSError: ``root`` cannot be created or written (the message names it).
    """

    def __init__(self, root: str | os.PathLike, *, keep_failed: bool = False, video: VideoOptions | None = None,
                 overwrite: bool = False) -> None:
        import_pyarrow()
        for name, flag in (('keep_failed', keep_failed), ('overwrite', overwrite)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f'Recorder: {name}={flag!r}: valid values are True and False')
        if video is not None and not isinstance(video, VideoOptions):
            raise TypeError(f'Recorder: video={video!r}: a VideoOptions (internutopia.recording.VideoOptions(codec=..., '
                            'crf=..., preset=...)) or None (the defaults)')
        # (absolute now: the writer opens it at the first step, after a chdir the script may make)
        root = os.path.abspath(os.fspath(root))
        self._claim, self._created = claim_folder(root, bool(overwrite))
        atexit.register(self._release)  # (a recorder never closed: its claim goes with its process)
        self.root = root
        self.keep_failed = bool(keep_failed)
        self.video = video or VideoOptions()
        self.episodes_saved = 0
        self.episodes_dropped = 0
        self.saves_failed = 0
        self.saved_run_indices: list[int] = []
        self._saving: dict[int, int] = {}  # token -> run index of the saves queued, not yet reported
        self._env: Any = None
        self._source: SlotSource
        self._layout: Layout | None = None
        self._writer: DatasetWriter | None = None
        self._slots: dict[int, SlotEpisode] = {}
        self._actions_fixed = False  # the layout's action columns (fixed after the others)
        self._repeat: int | None = None  # physics steps per frame (fixed by the first recorded step)
        self._first_call = True  # (episodes running before it are not recorded: warned about there)
        self._tokens = itertools.count()
        self._warned: set[str] = set()

    def attach(self, env: Any) -> Recorder:
        """Record ``env`` from its next ``reset`` on; returns ``self``. ``env`` is a ``vec_env.Env``,
        or a Gymnasium env of this project (vector or single, through any wrappers) or its SB3 or
        rsl-rl bridge: the ``vec_env.Env`` under it is recorded (a frame per vector step).

        A Ray-distributed env is recorded too (its runners send each step's parsed commands back
        while the recording is attached; :mod:`~internutopia.recording.source`).

        Raises:
            TypeError: ``env`` has no observer hook (not an env of this project).
        """
        env = vec_env_of(env)
        if not hasattr(env, 'add_observer'):
            raise TypeError(f'Recorder.attach: {type(env).__name__} cannot be recorded (needs a vec_env.Env)')
        if self._env is not None:
            raise RuntimeError('this Recorder is already attached to an env')
        self._source = slot_source(env)
        self._env = env
        env.add_observer(self)
        return self

    @property
    def layout(self) -> Layout | None:
        """The recording's layout (``None`` until the first step is recorded)."""
        return self._layout

    # -- the env's observer hook ---------------------------------------------------------------
    def on_reset(self, slots: list[int], obs: list[Any], info: list[Any]) -> None:
        """Slots ``slots`` took new episodes (``obs``/``info`` aligned to them)."""
        source = self._source
        if self._first_call:
            self._warn_started_before([slot for slot in self._env.active_slots if slot not in slots])
        error: Exception | None = None
        try:
            source.prepare([slot for slot, slot_obs in zip(slots, obs, strict=True) if slot_obs is not None])
        except Exception as exc:  # noqa: BLE001 - its slots' episodes then go unrecorded below; raised after
            error = exc
        for slot, slot_obs, task_cfg in zip(slots, obs, info, strict=True):
            try:
                self._abandon(slot)  # (forgotten first: a writer's error leaves no old episode in the slot)
                if slot_obs is None:
                    continue
                robots = source.robots(slot)
                episode = SlotEpisode(next(self._tokens), source.episode_index(slot), slot, task_text(task_cfg), robots)
                self._observe(episode, slot_obs)
                self._slots[slot] = episode  # (once observed: an error leaves the slot unrecorded, not half-set)
            except Exception as exc:  # noqa: BLE001 - the other slots' episodes still start; raised below
                error = error or exc
        self._collect()
        if error is not None:
            raise error

    def on_reset_arrays(self, slots: list[int], obs: dict[str, Any] | None, info: list[Any] | None) -> None:
        """``env.reset_arrays``' call: slots ``slots`` took new episodes; ``obs`` the array
        observation (``None`` where the env has none, or ``info`` ``None`` for a reset that raised
        once complete: each slot's observation is read from the env)."""
        if obs is None or info is None:
            every, configs = self._env.get_observations(), self._env.active_task_configs
            info = [configs.get(slot) if every[slot] is not None else None for slot in slots] if info is None else info
            self.on_reset(slots, [every[slot] for slot in slots], info)
        else:
            self.on_reset(slots, started_rows(obs, slots, info), info)

    def on_step(self, action: list[Any], result: tuple[list, list, list, list, list]) -> None:
        """A step's action list and its results (either flag convention)."""
        self._on_step(action, result, 1)

    def on_step_arrays(self, action: dict[str, dict[str, Any]], result: Any, repeat: int,
                       reset_list: list[int] | None) -> None:
        """``env.step_arrays``' call: its batched action, its ``ArrayStep``, its ``repeat`` (a
        frame) and the slots it started after the step (``reset_list``), read per slot."""
        actions, lists = array_step_lists(action, result, self._env.runner)
        try:
            self._on_step(actions, lists, int(repeat))
        finally:
            if reset_list is not None and result.started is not None:
                self.on_reset(list(reset_list), started_rows(result.obs, reset_list, result.started), list(result.started))

    def _on_step(self, action: list[Any], result: tuple[list, list, list, list, list], repeat: int) -> None:
        """A step's per-slot action list and results, each a frame of ``repeat`` physics steps."""
        obs, reward, terminated, truncated, info = result
        action = self._source.commands(action)
        error: Exception | None = None
        if self._first_call:
            self._warn_started_before([slot for slot, slot_info in enumerate(info) if slot_info is not None])
        if self._repeat is None:
            self._repeat = repeat
        elif repeat != self._repeat:
            self._warn(f'recording: a step of repeat={repeat} in a recording of {self._repeat} physics step(s) per '
                       'frame: the episodes it ran are not saved (record each repeat into its own dataset)')
            for slot in [slot for slot in self._slots if info[slot] is not None]:
                self._abandon(slot)
        if self._layout is None and self._slots:
            try:
                self._make_layout()  # the observation's columns and cameras, and the writer
            except Exception:
                for slot in list(self._slots):  # they would miss this step: never saved (no writer yet)
                    self._abandon(slot)
                raise
        if self._layout is not None:
            for slot, episode in list(self._slots.items()):
                if episode.raw is None:
                    continue
                raw, episode.raw = episode.raw, None  # (its first observation, kept until the layout existed)
                try:
                    self._observe(episode, raw)
                except Exception as exc:  # noqa: BLE001 - raised below, once the other slots have their rows
                    error = error or exc
                    with contextlib.suppress(Exception):
                        self._abandon(slot)
        if self._layout is not None and not self._actions_fixed:
            # The action columns need commands to size them: fixed at the first step that sends one
            # (or ends an episode); the rows before it get NaN actions then.
            live = [slot for slot, episode in self._slots.items() if not episode.skipped]
            if any(obs[s] is None or terminated[s] or truncated[s] or action[s] for s in live):
                try:
                    self._fix_actions(action, live)
                except Exception:
                    for slot in list(self._slots):  # they would miss this step's action
                        self._abandon(slot)
                    raise
        for slot, episode in list(self._slots.items()):
            ended = obs[slot] is None or bool(terminated[slot]) or bool(truncated[slot])
            try:
                if not episode.skipped and moved_unseen(episode.run_index, episode.steps, info[slot], repeat):
                    self._warn(f'recording: episode {episode.run_index} (slot {slot}) ran steps, ended or was replaced out '
                               "of the recording's sight (the runner stepped directly); it is not saved", per_episode=True)
                    self._abandon(slot)
                    continue
                steps = info[slot].get('steps')
                if steps is not None:
                    episode.steps = int(steps)
                if episode.skipped:  # (another layout)
                    if ended:
                        del self._slots[slot]
                        self.episodes_dropped += 1
                    continue
                self._add_row(episode, action[slot], reward[slot], ended, bool(truncated[slot]))
                if ended:
                    self._finish(episode, info[slot] or {})
                    del self._slots[slot]
                else:
                    self._observe(episode, obs[slot])
            except Exception as exc:  # noqa: BLE001 - raised below, once the other slots have their rows
                error = error or exc
                with contextlib.suppress(Exception):  # (the writer's error again, if it was the writer's)
                    self._abandon(slot)  # it would miss a frame: never saved
        self._collect()
        if error is not None:
            raise error

    def _add_row(self, episode: SlotEpisode, entry: Any, reward: Any, ended: bool, truncated: bool) -> None:
        """One frame: the pending observation, the action sent from it, the step's reward and flags.
        Whole or not at all: the row is made first, its camera frames sent, then it is appended."""
        layout, writer = self._layout, self._writer
        assert layout is not None and writer is not None  # made together
        state, environment, images = episode.pending
        # (before the action columns are fixed no slot sent a command: its row gets NaNs then)
        actions = layout.action(entry) if self._actions_fixed else None
        row = (state, environment, actions, float(reward or 0.0), ended, truncated)
        if not episode.opened:
            writer.open_episode(episode.token)
            episode.opened = True
        if images:
            writer.add_frames(episode.token, images)
        episode.rows.append(row)

    def on_close(self) -> None:
        """The env is closing: save what finished, drop what did not. A failure to write is
        warned about here (the env still releases its world); :meth:`close` raises it."""
        try:
            self.close()
        except Exception as exc:  # noqa: BLE001 - the env's close must go on
            warnings.warn(f'recording to {self.root} failed: {exc}', stacklevel=2)

    def close(self) -> None:
        """Finish the queued saves and stop the writer (episodes still running are dropped); the
        env stops calling the recorder and steps on unrecorded (so a recording whose writer died is
        closed and the run goes on).

        The writer is stopped whatever fails; saves that failed are warned about (``saves_failed``).

        Raises:
            RuntimeError: the writer died or hung (the episodes it had not saved are lost).
        """
        try:
            self._close()
        finally:
            self._release()

    def _release(self) -> None:
        """Remove the claim file of ``root`` (and ``root``, if this recorder made it and wrote nothing)."""
        if self._writer is not None and not self._writer.closed:
            return  # (the writer still writes: its close, then this recorder's, release the folder)
        atexit.unregister(self._release)
        release_folder(self.root, self._claim, self._created)

    def _close(self) -> None:
        if self._env is not None:
            with contextlib.suppress(ValueError):  # (removed already: a second close)
                self._env.remove_observer(self)
                self._source.detach()
        error: Exception | None = None
        for slot in list(self._slots):
            try:
                self._abandon(slot)
            except Exception as exc:  # noqa: BLE001 - the writer is stopped all the same; raised below
                error = error or exc
        if self._writer is not None:
            try:
                self._writer.close()
            finally:
                self._collect()
                self.saves_failed += len(self._saving)  # never reported: the writer died first
                self._saving.clear()
        if error is not None:
            raise error

    def flush(self) -> None:
        """Wait until every episode ended so far is on disk (or warned about as not saved)."""
        if self._writer is not None:
            self._writer.flush()
            self._collect()

    # -- the recording's own work --------------------------------------------------------------
    def _observe(self, episode: SlotEpisode, slot_obs: Any) -> None:
        layout = self._layout
        if layout is None:
            # Laid out once the layout exists (the next step); a copy, as the env may reuse its arrays.
            episode.raw = copy.deepcopy(slot_obs)
            return
        if not episode.opened and not episode.rows and not layout.matches(slot_obs, episode.robots):
            self._warn(f'recording: episode {episode.run_index} (slot {episode.slot}) does not fit the dataset\'s layout '
                       f'(robots {episode.robots}, state columns or cameras differ); it is not recorded', per_episode=True)
            episode.pending, episode.skipped = None, True
            return
        images = [np.array(image) for image in layout.images(slot_obs)]
        episode.pending = (layout.state(slot_obs), layout.environment_state(slot_obs), images)

    def _make_layout(self) -> None:
        """The observation's columns and cameras, from the first slot's first observation, and the
        writer (the action columns come later: :meth:`_fix_actions`)."""
        first = min(self._slots)
        episode = self._slots[first]
        layout = Layout.from_observation(episode.raw, episode.robots, {})
        for key in layout.cameras:  # (a size the encoder cannot take: refused now, not at every save)
            height, width = layout.features[key]['shape'][:2]
            try:
                self.video.pix_fmt(width, height)
            except ValueError as exc:
                raise ValueError(f'recording to {self.root}: camera {key}: {exc}') from None
        robot_type = self._source.robot_type(first, episode.robots[0]) if episode.robots else None
        fps = 1.0 / (self._source.dt * (self._repeat or 1))
        writer = DatasetWriter(self.root, layout.features, list(layout.cameras), fps, self.video,
                               robot_type=robot_type, max_queue=max(64, 8 * self._env.env_num), claim=self._claim)
        self._layout, self._writer = layout, writer  # together, once the writer runs (on_step lays out the episodes)

    def _fix_actions(self, action: list[Any], live: list[int]) -> None:
        """The action columns, sized by the commands of this step (the first that sends any), or a
        controller's fixed ``action_shape``; the rows recorded before get ``NaN`` actions."""
        layout, writer = self._layout, self._writer
        assert layout is not None and writer is not None  # made together
        actions: dict[str, dict[str, tuple[Any, Any]]] = {}
        if live:
            first = min(live)
            for robot in layout.robots:
                robot_actions = actions[robot] = {}
                for name, (parse, fixed) in self._source.controllers(first, robot).items():
                    # the first command any slot (of the layout's robots) sent this controller
                    example = next((entry[robot][name] for slot, entry in enumerate(action)
                                    if slot in live and entry and robot in entry and name in (entry[robot] or {})), None)
                    robot_actions[name] = (parse, fixed if example is None else example)
        layout.set_actions(actions)
        writer.set_features(layout.features)
        missing = np.full(layout.action_size, np.nan, np.float32)
        for episode in self._slots.values():
            if any(row[2] is None for row in episode.rows):
                episode.rows = [row if row[2] is not None else (row[0], row[1], missing, *row[3:]) for row in episode.rows]
        self._actions_fixed = True

    def _finish(self, episode: SlotEpisode, info: dict[str, Any]) -> None:
        """Queue an ended episode's save (counted saved once the writer reports it), or its drop."""
        assert self._writer is not None
        metrics = info.get('metrics') or {}
        success = self._success(episode, metrics.get('success') if isinstance(metrics, dict) else None)
        failed = bool(info.get('failed') or info.get('diverged') or info.get('runner_failed'))  # (runner_failed: on Ray)
        keep = not failed and (success is not False or self.keep_failed)
        if not keep:
            self._writer.drop_episode(episode.token)
            self.episodes_dropped += 1
            return
        states, environments, actions, rewards, dones, truncateds = zip(*episode.rows, strict=True)
        length = len(rewards)
        columns = {
            'observation.state': np.stack(states),
            'action': np.stack(actions),
            'next.reward': np.asarray(rewards, np.float32),
            'next.done': np.asarray(dones, bool),
            'next.truncated': np.asarray(truncateds, bool),
            'next.success': np.full(length, success is not False),
            'run_episode_index': np.full(length, episode.run_index, np.int64),
            'env_slot': np.full(length, episode.slot, np.int64),
        }
        if 'observation.environment_state' in self._layout.features:  # type: ignore[union-attr]
            columns['observation.environment_state'] = np.stack(environments)
        extra = {'run_episode_index': episode.run_index, 'env_slot': episode.slot, 'success': success is not False}
        self._writer.save_episode(episode.token, columns, episode.task, extra)
        self._saving[episode.token] = episode.run_index

    def _success(self, episode: SlotEpisode, value: Any) -> bool | None:
        """An episode's ``success`` metric as a bool (:func:`~internutopia.recording.calls.success_of`),
        warned about when it is not a bool or a number."""
        success, readable = success_of(value)
        if not readable:
            self._warn(f'recording: episode {episode.run_index} has a success metric of {value!r} ({type(value).__name__}), '
                       'not a bool or a number: it is taken as unsuccessful (dropped, or saved with success false when '
                       'keep_failed=True)', per_episode=True)
        return success

    def _collect(self) -> None:
        """Count the saves the writer reported done; warn of the episodes it could not write."""
        if self._writer is None:
            return
        for token, error in self._writer.take_reports():
            run_index = self._saving.pop(token, None) if token is not None else None
            if run_index is not None and error is None:
                self.episodes_saved += 1
                self.saved_run_indices.append(run_index)
            elif run_index is not None:
                self.saves_failed += 1
                self._warn(f'recording: episode {run_index} could not be saved, it is not in the dataset: {error}', per_episode=True)
            elif error is not None:  # (a dropped episode's files, or the writer's own)
                self._warn(f'recording to {self.root}: {error}')

    def _abandon(self, slot: int) -> None:
        """Drop ``slot``'s episode (forgotten and counted first: the writer may raise)."""
        episode = self._slots.pop(slot, None)
        if episode is None:
            return
        self.episodes_dropped += 1  # (a skipped one too: counted here or when it ends, once)
        if episode.opened and self._writer is not None:
            self._writer.drop_episode(episode.token)

    def _warn_started_before(self, slots: list[int]) -> None:
        """At the first call the recorder sees: warn of the episodes that started before it was
        attached (in ``slots``), which it cannot record."""
        self._first_call = False
        if slots:
            self._warn(f'recording: the episodes running in slot(s) {slots} started before the recorder was attached '
                       'and are not recorded (attach it before the first reset)')

    def _warn(self, message: str, per_episode: bool = False) -> None:
        if per_episode:  # (a text naming one episode: neither kept here nor in the caller's warning registry)
            warn_per_episode(message)
        elif message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, stacklevel=caller_stacklevel())

