"""``Recorder``: turns any run of a ``vec_env.Env`` into a LeRobot dataset.

Attach one to an env and drive the env as usual; every episode that finishes is saved as one
dataset episode, in the order episodes finish::

    env = Env(config)
    recorder = Recorder('demos/pick_place').attach(env)
    ...  # reset/step as usual (env.step: the dict API; env.step_arrays is not recorded)
    env.close()                     # waits for the last saves; or recorder.close()

It sees what the user saw: the env calls it with each ``reset``'s and ``step``'s results (a
narrow observer hook of ``vec_env.Env``; nothing below the env knows it exists). Each slot's
episode is buffered on its own (its per-step rows; its camera frames go straight to a video encoder
on the writer's process) and saved when it ends:

- frame ``t`` of an episode holds the observation the action was chosen from, the action sent
  (as its controllers received it), and the reward and flags of the step it led to (``next.*``);
  an episode of ``n`` steps has ``n`` frames (the final observation is not a frame);
- ``run_episode_index`` is the episode's index in the run's queue and results file,
  ``env_slot`` the slot it ran in; ``meta/episodes`` carries both and ``success``;
- an episode reset before it ended (abandoned), or one that failed (an error, a diverged
  simulation) is never saved; one that ended without success (its ``success`` metric false)
  is dropped unless ``keep_failed=True``, which saves it with ``next.success`` false;
- ``episodes_saved`` and ``saved_run_indices`` count the episodes the writer has saved (on disk:
  every one queued so far after :meth:`Recorder.flush` or :meth:`Recorder.close`); an episode
  whose files could not be written is that episode's loss only: warned about, counted in
  ``saves_failed``, and the recording goes on with the next ones.

The env calls its observers with Ctrl-C held (``vec_env.Env.step``), so a Ctrl-C never lands
between two of the recorder's updates; each update is also ordered so that an exception leaves
it whole: a frame's row is one tuple appended at once, the layout is set once its writer runs,
and an episode an error cut short (it would miss a frame) is dropped, not saved with a gap.

The layout (:mod:`internutopia.recording.layout`) is fixed by the first recorded step; an episode
whose robots, state size or cameras differ is skipped with a warning (record such runs into
separate datasets).
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import os
import warnings
from typing import Any

import numpy as np

from internutopia.core.util.caller import caller_stacklevel
from internutopia.recording.files import import_pyarrow
from internutopia.recording.layout import Layout
from internutopia.recording.video import VideoOptions
from internutopia.recording.writer import DatasetWriter

__all__ = ['Recorder']


class _SlotEpisode:
    """One slot's episode as it is recorded: its rows so far and its latest observation's state."""

    def __init__(self, token: int, run_index: int, slot: int, task: str, robots: list[str]) -> None:
        self.token = token
        self.run_index = run_index
        self.slot = slot
        self.task = task
        self.robots = robots
        #: One tuple per frame (appended whole): state, environment state, action, reward, done, truncated.
        self.rows: list[tuple[Any, Any, Any, float, bool, bool]] = []
        self.pending: Any = None  # the latest observation (not yet a frame)
        self.laid_out = False  # pending (and raw) hold observations as they came, until the layout exists
        self.skipped = False
        self.opened = False
        self.raw: list[tuple[Any, Any, Any, bool, bool]] = []  # steps before the layout was fixed


class Recorder:
    """Records a ``vec_env.Env`` run into a LeRobot v3.0 dataset at ``root`` (see the module doc).

    Args:
        root: the dataset's folder; it must not exist yet, or be empty (``overwrite=True``
            deletes what is there).
        keep_failed: also save episodes that ended without success (marked ``next.success`` false).
        video: how camera frames are encoded (:class:`~internutopia.recording.video.VideoOptions`).
        overwrite: replace an existing dataset at ``root``.

    Attributes:
        episodes_saved: episodes the writer has saved (their files complete and counted).
        saved_run_indices: their ``run_episode_index``, in the order they were saved.
        episodes_dropped: episodes not to be saved (abandoned, failed, without success, not fitting
            the layout) and episodes an error cut short.
        saves_failed: episodes to be saved whose files could not be written (each one warned about;
            a writer that died loses those not yet saved, counted here at :meth:`close`).

    Raises:
        ImportError: ``pyarrow`` or ``av`` is missing (the ``dataset`` extra).
        FileExistsError: ``root`` holds files and ``overwrite`` is false.
    """

    def __init__(self, root: str | os.PathLike, *, keep_failed: bool = False, video: VideoOptions | None = None,
                 overwrite: bool = False) -> None:
        import_pyarrow()
        root = os.fspath(root)
        if os.path.exists(root) and (not os.path.isdir(root) or os.listdir(root)):
            if not overwrite:
                raise FileExistsError(f'record: {root!r} already exists and is not empty; choose a new folder '
                                      'or pass overwrite=True')
            if os.path.isdir(root):
                import shutil

                shutil.rmtree(root)
            else:
                os.remove(root)
        self.root = root
        self.keep_failed = bool(keep_failed)
        self.video = video or VideoOptions()
        self.episodes_saved = 0
        self.episodes_dropped = 0
        self.saves_failed = 0
        self.saved_run_indices: list[int] = []
        self._saving: dict[int, int] = {}  # token -> run index of the saves queued, not yet reported
        self._env: Any = None
        self._layout: Layout | None = None
        self._writer: DatasetWriter | None = None
        self._slots: dict[int, _SlotEpisode] = {}
        self._tokens = itertools.count()
        self._warned: set[str] = set()

    def attach(self, env: Any) -> Recorder:
        """Record ``env`` from its next ``reset`` on; returns ``self``.

        Raises:
            TypeError: ``env`` has no observer hook or no local runner (a Ray-distributed env).
        """
        if not hasattr(env, 'add_observer') or getattr(env, 'is_remote', False):
            raise TypeError(f'Recorder.attach: {type(env).__name__} cannot be recorded (needs a local vec_env.Env)')
        if self._env is not None:
            raise RuntimeError('this Recorder is already attached to an env')
        self._env = env
        self._fps = 1.0 / env.get_dt()
        env.add_observer(self)
        return self

    @property
    def layout(self) -> Layout | None:
        """The recording's layout (``None`` until the first step is recorded)."""
        return self._layout

    # -- the env's observer hook ---------------------------------------------------------------
    def on_reset(self, slots: list[int], obs: list[Any], info: list[Any]) -> None:
        """Slots ``slots`` took new episodes (``obs``/``info`` aligned to them)."""
        runner = self._env.runner
        error: Exception | None = None
        for slot, slot_obs, task_cfg in zip(slots, obs, info, strict=True):
            try:
                self._abandon(slot)  # (forgotten first: a writer's error leaves no old episode in the slot)
                if slot_obs is None:
                    continue
                robots = list(runner.slot_robots[slot])
                episode = _SlotEpisode(next(self._tokens), int(runner.episodes[slot].index), slot, _task_text(task_cfg), robots)
                self._observe(episode, slot_obs)
                self._slots[slot] = episode  # (once observed: an error leaves the slot unrecorded, not half-set)
            except Exception as exc:  # noqa: BLE001 - the other slots' episodes still start; raised below
                error = error or exc
        self._collect()
        if error is not None:
            raise error

    def on_step(self, action: list[Any], result: tuple[list, list, list, list, list]) -> None:
        """A step's action list and its results (either flag convention)."""
        obs, reward, terminated, truncated, info = result
        if self._layout is None and self._slots:
            # The action layout needs commands to size it: fixed at the first step that sends one
            # (or ends an episode); steps before it are kept as they came and laid out then.
            ending = any(obs[s] is None or terminated[s] or truncated[s] for s in self._slots)
            if not ending and not any(action[s] for s in self._slots):
                for slot, episode in self._slots.items():
                    # Copies: a loop may fill in the same action dict for its next steps.
                    episode.raw.append((episode.pending[0], copy.deepcopy(action[slot]), reward[slot], False,
                                        bool(truncated[slot])))
                    episode.pending = (copy.deepcopy(obs[slot]), None, None)
                return
            try:
                self._make_layout(action)
            except Exception:
                for slot in list(self._slots):  # they would miss this step: never saved (no writer yet)
                    self._abandon(slot)
                raise
        error: Exception | None = None
        for slot, episode in list(self._slots.items()):
            ended = obs[slot] is None or bool(terminated[slot]) or bool(truncated[slot])
            try:
                if not episode.laid_out:
                    self._lay_out(episode)  # the steps seen before the layout existed
                if episode.pending is None:  # skipped (another layout)
                    if ended:
                        del self._slots[slot]
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

    def _add_row(self, episode: _SlotEpisode, entry: Any, reward: Any, ended: bool, truncated: bool) -> None:
        """One frame: the pending observation, the action sent from it, the step's reward and flags.
        Whole or not at all: the row is made first, its camera frames sent, then it is appended."""
        layout, writer = self._layout, self._writer
        assert layout is not None and writer is not None  # made together
        state, environment, images = episode.pending
        row = (state, environment, layout.action(entry), float(reward or 0.0), ended, truncated)
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
        if self._env is not None:
            with contextlib.suppress(ValueError):  # (removed already: a second close)
                self._env.remove_observer(self)
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
    def _observe(self, episode: _SlotEpisode, slot_obs: Any) -> None:
        layout = self._layout
        if layout is not None and not episode.opened and not layout.matches(slot_obs, episode.robots):
            self._warn(f'recording: episode {episode.run_index} (slot {episode.slot}) does not fit the dataset\'s layout '
                       f'(robots {episode.robots}, cameras or state differ); it is not recorded')
            episode.pending, episode.skipped, episode.laid_out = None, True, True
            return
        if layout is None:
            # Laid out once the first action is known; a copy, as the env may reuse its arrays.
            episode.pending = (copy.deepcopy(slot_obs), None, None)
            return
        images = [np.array(image) for image in layout.images(slot_obs)]
        episode.pending = (layout.state(slot_obs), layout.environment_state(slot_obs), images)
        episode.laid_out = True

    def _make_layout(self, action: list[Any]) -> None:
        runner = self._env.runner
        first = min(self._slots)
        episode = self._slots[first]
        slot_obs = episode.pending[0]
        actions: dict[str, dict[str, tuple[Any, Any]]] = {}
        for robot in episode.robots:
            group = runner.slot_robots[first][robot]
            robot_actions = actions[robot] = {}
            for name, controller in group.controllers.items():
                # the first command any slot (of the same robots) sent this controller
                example = next((entry[robot][name] for slot, entry in enumerate(action)
                                if slot in self._slots and self._slots[slot].robots == episode.robots
                                and entry and robot in entry and name in (entry[robot] or {})), None)
                if example is None and getattr(controller, 'action_shape', None):
                    example = np.zeros(controller.action_shape)
                robot_actions[name] = (controller.parse_action, example)
        layout = Layout.from_observation(slot_obs, episode.robots, actions)
        robot_type = type(runner.slot_robots[first][episode.robots[0]]).__name__ if episode.robots else None
        writer = DatasetWriter(self.root, layout.features, list(layout.cameras), self._fps, self.video,
                               robot_type=robot_type, max_queue=max(64, 8 * self._env.env_num))
        self._layout, self._writer = layout, writer  # together, once the writer runs (on_step lays out the episodes)

    def _lay_out(self, episode: _SlotEpisode) -> None:
        """An episode that started before the layout existed: its steps so far as frames, and its
        latest observation laid out."""
        current = episode.pending[0]
        raw, episode.raw = episode.raw, []
        for raw_obs, entry, reward, ended, truncated in raw:
            self._observe(episode, raw_obs)
            if episode.pending is None:  # (skipped: it does not fit)
                return
            self._add_row(episode, entry, reward, ended, truncated)
        self._observe(episode, current)

    def _finish(self, episode: _SlotEpisode, info: dict[str, Any]) -> None:
        """Queue an ended episode's save (counted saved once the writer reports it), or its drop."""
        assert self._writer is not None
        metrics = info.get('metrics') or {}
        success = metrics.get('success') if isinstance(metrics, dict) else None
        failed = bool(info.get('failed') or info.get('diverged'))
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
                self._warn(f'recording: episode {run_index} could not be saved, it is not in the dataset: {error}')
            elif error is not None:  # (a dropped episode's files, or the writer's own)
                self._warn(f'recording to {self.root}: {error}')

    def _abandon(self, slot: int) -> None:
        """Drop ``slot``'s episode (forgotten and counted first: the writer may raise)."""
        episode = self._slots.pop(slot, None)
        if episode is None:
            return
        if not episode.skipped:
            self.episodes_dropped += 1
        if episode.opened and self._writer is not None:
            self._writer.drop_episode(episode.token)

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, stacklevel=caller_stacklevel())


def _task_text(task_cfg: Any) -> str:
    """An episode's task text: its ``prompt`` (or ``instruction``), else its task type."""
    for field in ('prompt', 'instruction', 'task_description'):
        text = getattr(task_cfg, field, None)
        if isinstance(text, str) and text:
            return text
    return str(getattr(task_cfg, 'type', 'task'))
