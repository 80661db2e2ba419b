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
  is dropped unless ``keep_failed=True``, which saves it with ``next.success`` false.

The layout (:mod:`internutopia.recording.layout`) is fixed by the first recorded step; an episode
whose robots, state size or cameras differ is skipped with a warning (record such runs into
separate datasets).
"""

from __future__ import annotations

import copy
import itertools
import os
import warnings
from typing import Any

import numpy as np

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
        self.rows: dict[str, list[Any]] = {'observation.state': [], 'observation.environment_state': [], 'action': [],
                                           'next.reward': [], 'next.done': [], 'next.truncated': []}
        self.pending: Any = None  # the latest observation (not yet a frame)
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
        self.saved_run_indices: list[int] = []
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
        for slot, slot_obs, task_cfg in zip(slots, obs, info, strict=True):
            self._abandon(slot)
            if slot_obs is None:
                continue
            robots = list(runner.slot_robots[slot])
            episode = _SlotEpisode(next(self._tokens), int(runner.episodes[slot].index), slot, _task_text(task_cfg), robots)
            self._slots[slot] = episode
            self._observe(episode, slot_obs)

    def on_step(self, action: list[Any], result: tuple[list, list, list, list, list]) -> None:
        """A step's action list and its results (either flag convention)."""
        obs, reward, terminated, truncated, info = result
        if self._layout is None and self._slots:
            # The action layout needs commands to size it: fixed at the first step that sends one
            # (or ends an episode); steps before it are kept as they came and laid out then.
            ending = any(obs[s] is None or terminated[s] or truncated[s] for s in self._slots)
            if not ending and not any(action[s] for s in self._slots):
                for slot, episode in self._slots.items():
                    episode.raw.append((episode.pending[0], action[slot], reward[slot], False, bool(truncated[slot])))
                    episode.pending = (copy.deepcopy(obs[slot]), None, None)
                return
            self._make_layout(action)
        for slot, episode in list(self._slots.items()):
            if episode.pending is None:  # skipped (another layout)
                if obs[slot] is None or terminated[slot] or truncated[slot]:
                    del self._slots[slot]
                continue
            ended = obs[slot] is None or bool(terminated[slot]) or bool(truncated[slot])
            self._add_row(episode, action[slot], reward[slot], ended, bool(truncated[slot]))
            if ended:
                del self._slots[slot]
                self._finish(episode, info[slot] or {})
            else:
                self._observe(episode, obs[slot])

    def _add_row(self, episode: _SlotEpisode, entry: Any, reward: Any, ended: bool, truncated: bool) -> None:
        """One frame: the pending observation, the action sent from it, the step's reward and flags."""
        layout, writer = self._layout, self._writer
        assert layout is not None and writer is not None  # made together
        state, environment, images = episode.pending
        rows = episode.rows
        rows['observation.state'].append(state)
        rows['observation.environment_state'].append(environment)
        rows['action'].append(layout.action(entry))
        rows['next.reward'].append(float(reward or 0.0))
        rows['next.done'].append(ended)
        rows['next.truncated'].append(truncated)
        if not episode.opened:
            writer.open_episode(episode.token)
            episode.opened = True
        if images:
            writer.add_frames(episode.token, images)

    def on_close(self) -> None:
        """The env is closing: save what finished, drop what did not. A failure to write is
        warned about here (the env still releases its world); :meth:`close` raises it."""
        try:
            self.close()
        except Exception as exc:  # noqa: BLE001 - the env's close must go on
            warnings.warn(f'recording to {self.root} failed: {exc}', stacklevel=2)

    def close(self) -> None:
        """Finish the queued saves and stop the writer (episodes still running are dropped)."""
        for slot in list(self._slots):
            self._abandon(slot)
        if self._writer is not None:
            self._writer.close()

    def flush(self) -> None:
        """Wait until every episode ended so far is on disk."""
        if self._writer is not None:
            self._writer.flush()

    # -- the recording's own work --------------------------------------------------------------
    def _observe(self, episode: _SlotEpisode, slot_obs: Any) -> None:
        layout = self._layout
        if layout is not None and not episode.opened and not layout.matches(slot_obs, episode.robots):
            self._warn(f'recording: episode {episode.run_index} (slot {episode.slot}) does not fit the dataset\'s layout '
                       f'(robots {episode.robots}, cameras or state differ); it is not recorded')
            episode.pending, episode.skipped = None, True
            return
        if layout is None:
            # Laid out once the first action is known; a copy, as the env may reuse its arrays.
            episode.pending = (copy.deepcopy(slot_obs), None, None)
            return
        images = [np.array(image) for image in layout.images(slot_obs)]
        episode.pending = (layout.state(slot_obs), layout.environment_state(slot_obs), images)

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
        layout = self._layout = Layout.from_observation(slot_obs, episode.robots, actions)
        robot_type = type(runner.slot_robots[first][episode.robots[0]]).__name__ if episode.robots else None
        self._writer = DatasetWriter(self.root, layout.features, list(layout.cameras), self._fps, self.video,
                                     robot_type=robot_type, max_queue=max(64, 8 * self._env.env_num))
        for other in self._slots.values():  # the steps seen before the layout existed
            current = other.pending[0]
            for raw_obs, entry, reward, ended, truncated in other.raw:
                self._observe(other, raw_obs)
                if other.pending is None:
                    break
                self._add_row(other, entry, reward, ended, truncated)
            other.raw.clear()
            if not other.skipped:
                self._observe(other, current)

    def _finish(self, episode: _SlotEpisode, info: dict[str, Any]) -> None:
        assert self._writer is not None
        metrics = info.get('metrics') or {}
        success = metrics.get('success') if isinstance(metrics, dict) else None
        failed = bool(info.get('failed') or info.get('diverged'))
        keep = not failed and (success is not False or self.keep_failed)
        if not keep:
            self._writer.drop_episode(episode.token)
            self.episodes_dropped += 1
            return
        rows = episode.rows
        length = len(rows['next.reward'])
        columns = {
            'observation.state': np.stack(rows['observation.state']),
            'action': np.stack(rows['action']),
            'next.reward': np.asarray(rows['next.reward'], np.float32),
            'next.done': np.asarray(rows['next.done'], bool),
            'next.truncated': np.asarray(rows['next.truncated'], bool),
            'next.success': np.full(length, success is not False),
            'run_episode_index': np.full(length, episode.run_index, np.int64),
            'env_slot': np.full(length, episode.slot, np.int64),
        }
        if 'observation.environment_state' in self._layout.features:  # type: ignore[union-attr]
            columns['observation.environment_state'] = np.stack(rows['observation.environment_state'])
        extra = {'run_episode_index': episode.run_index, 'env_slot': episode.slot, 'success': success is not False}
        self._writer.save_episode(episode.token, columns, episode.task, extra)
        self.episodes_saved += 1
        self.saved_run_indices.append(episode.run_index)

    def _abandon(self, slot: int) -> None:
        episode = self._slots.pop(slot, None)
        if episode is None:
            return
        if episode.opened and self._writer is not None:
            self._writer.drop_episode(episode.token)
        if not episode.skipped:
            self.episodes_dropped += 1

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, stacklevel=3)


def _task_text(task_cfg: Any) -> str:
    """An episode's task text: its ``prompt`` (or ``instruction``), else its task type."""
    for field in ('prompt', 'instruction', 'task_description'):
        text = getattr(task_cfg, field, None)
        if isinstance(text, str) and text:
            return text
    return str(getattr(task_cfg, 'type', 'task'))
