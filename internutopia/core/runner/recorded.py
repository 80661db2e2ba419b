"""An action repeat's physics steps in recorded calls (the runner's collaborator for
``Runner.step_arrays_repeated``).

Step by step, an action repeat runs on each physics step the robots' hooks, the controllers,
the physics, then the tasks, rewards and metrics. Where the steps would write the same inputs
(each controller's command is idempotent, :attr:`~internutopia.core.controller.base.BaseController.idempotent_apply`,
and the robots' hooks change nothing on the steps after the first,
:meth:`~internutopia.core.robot.base.BaseRobot.quiet_steps`) and every stepping task can read
the steps afterwards (``CombinedStep.recorded``), :class:`RecordedRepeats` runs their physics
in one call of the backend that records each step's ``qpos`` (``World.rollout``), and the tasks
once over the record: the whole repeat where the hooks are quiet throughout (the Jetbot's), or
each stretch from one step the hooks act on to the next (a walking robot's, from one policy
tick to the next). Its results are the step-by-step path's, bit for bit:

- a slot whose episode ends on an inner step is put back to that step (``Rollout.rewind``),
  its episode finished and observed there; it then runs the call's remaining steps with the
  inputs the ``begin_step`` hooks leave a slot with no command (a Jetbot's stopped wheels, a
  walker's held command), as the step-by-step path runs it;
- a repeat in which every episode ends stops where the last one ended (``Rollout.stop_at``),
  as step by step, where no step runs once no episode does;
- where a MuJoCo warning stopped a simulation in the call (a divergence, say), the backend
  puts every slot back and that step runs on its own, as it otherwise does.

The gain is the Python between the physics steps (the hooks, the commands, the tasks' calls,
the step's bookkeeping): five times in six for the Jetbot's point-nav repeat, three times in four
for a walking robot's; the physics is the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from internutopia.core.runner.actions import Commands
from internutopia.core.runner.observations import ObservedEntries, merge_rows
from internutopia.core.runner.outcomes import Advance
from internutopia.core.task.base import RecordedSteps

#: The state field the tasks' recorded passes read (their robots' base positions).
RECORDED_FIELDS = ('qpos',)


class RecordedRepeats:
    """Runs an action repeat as one recorded physics call where it can (see the module docstring).

    Args:
        runner: the :class:`~internutopia.core.runner.runner.Runner` it serves (its table,
            groups, terms, world and episode ends).
    """

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def advance(self, actions: dict[str, dict[str, Any]], commands: Commands, remaining: int,
                observe_only: ObservedEntries | None) -> tuple[Advance, np.ndarray, dict[str, Any]] | None:
        """The next physics steps of ``commands`` (parsed from ``actions``, applied by the caller:
        the coming step's hooks and commands ran) in one recorded call: the ``remaining`` steps of
        the repeat, or as many of them as the robots' hooks leave quiet (see :meth:`_task_pass`); or
        ``None`` where that cannot be done (nothing was advanced: the caller steps on without it).

        Returns those steps as one :class:`Advance` (``active``: the slots that ran; rewards
        summed; flags, metrics and step counts as each slot's last step left them), the slots
        whose episodes ended before the last step and their final observations (taken on the
        step each ended on)."""
        runner = self.runner
        active = runner.table.active_slots()
        planned = self._task_pass(commands, remaining, active)
        if planned is None:
            return None
        task_pass, length = planned
        rollout = runner.world.rollout(length, RECORDED_FIELDS)
        if rollout is None:
            return None
        table = runner.table
        steps_before = table.steps.view()
        steps_before.flags.writeable = False
        try:
            reward, terminated, truncated, ran = task_pass(RecordedSteps(rollout.fields['qpos'], steps_before, length))
        except BaseException:
            rollout.stop_at(0)  # (the physics put back: a pass that must not raise did, see Terms.recorded_pass)
            raise
        table.count_step(active, length)
        ended = active[(terminated | truncated)[active]]
        early = ended[ran[ended] < length] if len(ended) else ended
        # (step by step, a repeat stops once no episode runs: here after the last one ended)
        stop = int(ran[active].max()) if len(early) == len(active) else length
        if stop < length:
            rollout.stop_at(stop)
        runner.world_steps += stop
        done = Advance(active, reward, terminated, truncated, {}, (), any_ended=bool(len(ended)), steps=stop)
        if not len(ended):
            return done, early, {}
        table.steps[early] -= length - ran[early]  # (each counts the steps it ran)
        # The slots that ended before the call's last step run on after their end: each is put
        # back there, finished and observed; then they run on as the step-by-step path runs them.
        coasting = early[ran[early] < stop]
        for count in np.unique(ran[coasting]).tolist():
            rollout.rewind(coasting[ran[coasting] == count], count)
        final_obs = self._finish_and_observe(done, coasting, observe_only)
        if len(coasting):
            # The slots still running (those that end on the last step too) get their commands
            # again after the begin_step hooks; the others, given none, run on with what those
            # hooks left. (Their steps are quiet ones, whose before_physics hooks do nothing; run
            # now, a walking policy's would take the tick that falls on the step after the call.)
            failed = runner._apply_commands(runner.actions.parse_batched(actions), before_physics_hooks=False)
            if failed:  # (the same commands applied without error a moment ago: the controller broke its word)
                slot, error = next(iter(failed.items()))
                raise RuntimeError(f'a controller declared idempotent_apply failed on env {slot} for a command it applied '
                                   f'without error earlier in the same action repeat: {type(error).__name__}: {error}') from error
            for count in np.unique(ran[coasting]).tolist():
                rollout.step(coasting[ran[coasting] == count], stop - count)
        last = ended[ran[ended] == stop]
        last_obs = self._finish_and_observe(done, last, observe_only, observe=last[ran[last] < length])
        if final_obs and last_obs:
            merge_rows(final_obs, last_obs, last[ran[last] < length])
        return done, early, final_obs or last_obs

    def _finish_and_observe(self, done: Advance, slots: np.ndarray, observe_only: ObservedEntries | None,
                            observe: np.ndarray | None = None) -> dict[str, Any]:
        """End the episodes of ``slots`` (their records into ``done.metrics``), then observe
        ``observe`` (by default ``slots``): the final observations of episodes that ended, as the
        step-by-step path takes them after the step they ended on."""
        runner = self.runner
        metrics, raised = runner.ends.finish_each(slots.tolist(), done.terminated, done.truncated)
        done.metrics.update(metrics)
        if raised:  # (their metrics raised as they ended: failed records, the others' stand)
            runner.ends.fail_running(done, raised, raised)
        return runner._observe_arrays_isolated(done, slots if observe is None else observe, observe_only)

    def _task_pass(self, commands: Commands, remaining: int, active: np.ndarray) -> tuple[Any, int] | None:
        """The tasks' recorded pass over ``active`` and the steps of the recorded call, where at
        least two of the ``remaining`` steps can be one (their inputs the same on every step, the
        tasks able to read them afterwards), else ``None``.

        The call ends where the robots' hooks stop being quiet (:meth:`BaseRobot.quiet_steps
        <internutopia.core.robot.base.BaseRobot.quiet_steps>`): a Jetbot's are quiet on every step,
        so its call is the whole repeat; a walking robot's policy ticks every few steps, so its
        calls run from one tick to the next, the tick's step first."""
        runner = self.runner
        if not runner.fuse_steps or remaining < 2 or not len(active):
            return None
        task_pass = runner.terms.recorded_pass(active)  # (first: the cheapest answer, from the terms' cached plan)
        if task_pass is None:
            return None
        for controller, _, _ in commands.values():
            if not controller.idempotent_apply:
                return None
        steps = min(remaining, 1 + runner.groups.quiet_steps(remaining - 1))
        return (task_pass, steps) if steps >= 2 else None


__all__ = ['RECORDED_FIELDS', 'RecordedRepeats']
