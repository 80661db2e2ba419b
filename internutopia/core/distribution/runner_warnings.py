"""Warnings the runner actors raised, warned again in the driver as one process would warn them.

A runner's own output is not shown (``log_to_driver=False``); it sends its warnings back with each
answer (``RunnerActor.warnings``) and the driver warns them here: an unknown robot name once per
name however many runners saw it, a failed episode start with the env's slot id (not the runner's)
and kept out of the caller's warning registry, unless ``episode_errors='raise'`` makes it the
call's error instead.
"""

from __future__ import annotations

import re
import warnings

from internutopia.core.util.caller import caller_stacklevel, warn_per_episode

__all__ = ['RunnerWarnings', 'failed_start_slot']

#: The runner's warning for an action naming a robot its slot does not have (once per robot name).
_NO_ROBOT = re.compile(r"^action\[\d+\]: no robot (.+?) in env \d+ ")
#: The runner's warning for an episode recorded as failed as it loaded or started
#: (``starts._warn_failed``): the slot it names is the runner's own.
_FAILED_START = re.compile(r'^episode \d+ failed to (?:load|start in slot (\d+)) ')


def failed_start_slot(message: str) -> int | None:
    """The runner's own slot a failed-start warning names (``None``: another warning, or a load)."""
    failed = _FAILED_START.match(message)
    return None if failed is None or failed.group(1) is None else int(failed.group(1))


class RunnerWarnings:
    """Warns, in the driver, what runners of ``local_num`` slots each warned."""

    def __init__(self, local_num: int, raise_failed: bool) -> None:
        self._local_num = local_num
        self._raise_failed = raise_failed
        #: Robot names an action named for a slot without them (warned once per name).
        self._unknown_robots: set[str] = set()

    def warn(self, warned: list[tuple[type[Warning], str]], runner_id: int | None = None) -> None:
        """Warn what runner ``runner_id`` warned."""
        for category, message in warned:
            robot = _NO_ROBOT.match(message)
            if robot is not None:  # (once per robot name, as on one process, however many runners)
                if robot.group(1) in self._unknown_robots:
                    continue
                self._unknown_robots.add(robot.group(1))
            failed = _FAILED_START.match(message)
            if failed is not None:
                if self._raise_failed:
                    continue  # (episode_errors='raise': the call raises the error instead, as on one process)
                if runner_id is not None and failed.group(1) is not None:  # (the slot of the env, not of its runner)
                    start, end = failed.span(1)
                    message = f'{message[:start]}{runner_id * self._local_num + int(failed.group(1))}{message[end:]}'
                # (its text names the episode: kept out of the caller's warning registry, as on one process)
                warn_per_episode(message, category)
                continue
            warnings.warn(message, category, stacklevel=caller_stacklevel())
