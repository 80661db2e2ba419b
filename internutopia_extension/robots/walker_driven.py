"""The robot hooks of a legged robot whose legs a walker drives
(:class:`~internutopia_extension.robots.h1_locomotion.walker.H1Walker` or a subclass of it): binding
the walker to the world, putting reset robots in their standing pose, the walker's per-step
command and 50 Hz tick, and ``policy_obs`` for a policy trained from outside. H1's, GR1's and
Aliengo's robot classes share them (``walker`` is ``None`` for an H1 or a GR1 that is carried, not walking).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from internutopia.core.robot.base import BaseRobot, as_slice, observes_by_need
from internutopia_extension.robots.h1_locomotion.walker import ROW_BY_ROW, OnnxPolicy
from internutopia_extension.robots.policy_clock import keeps_running


class WalkerDrivenRobot(BaseRobot):
    """A :class:`BaseRobot` whose legs :attr:`walker` drives (``None``: no walker, the hooks do nothing)."""

    #: The walking controller's runtime (set by the subclass's ``__init__``, with :meth:`start_walker`).
    walker: Any = None
    # The world lookup and the qpos, qvel and ctrl columns of joint_names read from it (see _stand_columns).
    _stand: tuple[Any, Any, Any, Any] | None = None

    def start_walker(self, config: Any, env_num: int, walker_class: type, gait: Any, default_policy: Path, robot: str) -> None:
        """Make :attr:`walker` (a ``walker_class``) run the policy ``config.walking_policy`` names:
        ``'default'`` (``default_policy``), the path of an ONNX policy, or ``'controller'`` (no
        policy: the ``leg_action`` controller gives the actions, for training), with the walker's
        stand hold unless ``config.walking_stand_hold`` is false. The physics steps in
        substeps of the policy's training step (``gait.PHYSICS_DT``). Callable before
        ``BaseRobot.__init__`` (GR1's controllers read the walker there)."""
        self.max_physics_dt = gait.PHYSICS_DT
        choice = getattr(config, 'walking_policy', 'default')
        policy = None if choice == 'controller' else OnnxPolicy(
            default_policy if choice == 'default' else choice, symmetric=getattr(config, 'walking_policy_symmetric', True),
            gait_module=gait, robot=robot)
        self.walker = walker_class(env_num, policy, stand_hold=getattr(config, 'walking_stand_hold', True))
        #: The joints' pose at reset, in :attr:`joint_names` order (what :meth:`stand` takes).
        self.standing_pose = np.array([gait.STANDING_POSE.get(name, 0.0) for name in self.joint_names])

    @property
    def actuated_joints(self) -> list[str]:
        return list(self.joint_names)

    @property
    def walker_joints(self) -> tuple[str, ...]:
        """The joints whose servo targets the walker sets (none when nothing walks)."""
        return tuple(self.walker.gait.LEG_JOINTS) if self.walker is not None else ()

    # Whether the last bind kept a slot of the group running (see bind).
    _walker_runs_on = False

    def bind(self, world: Any, slots: np.ndarray) -> None:
        # Read before the slots change: whether a slot of the group runs on through this bind (the
        # pack gained or lost other slots), so that the walker's clock keeps its schedule.
        self._walker_runs_on = self.world is not None and keeps_running(self.slots, slots)
        super().bind(world, slots)

    def bind_walker(self, world: Any) -> None:
        """Bind :attr:`walker` to ``world``'s data and this pack's free base (call from ``bind``,
        after ``super().bind``). The walker's 50 Hz clock keeps its schedule while a slot of the
        group runs on through the bind: a slot joining the pack (its row's time is stale until its
        reset) ticks with the others from their next tick on, as a slot reset within the pack does,
        and a slot leaving it moves no tick of the others. A group whose slots all start anew
        starts it at their episodes' start (:meth:`reset_walking`, after the reset's time is set)."""
        if self.walker is not None and len(self.slots):
            assert self._root_qposadr is not None  # (a free base)
            time = None if self._walker_runs_on else float(world.data.time[self.slots[0]])
            self.walker.bind(world.data, world.lookup, self.full_name(''), self._root_qposadr,
                             int(self.root_dofadr[self.slots[0]]), time)

    def stand(self, slots: np.ndarray, standing: np.ndarray) -> None:
        """Put the robots of ``slots`` at rest in the joint pose ``standing`` (every joint of
        :attr:`joint_names`), their servos holding it."""
        data = self.bound_world.data
        joints, dofs, servos = self._stand_columns()
        if len(slots) <= ROW_BY_ROW:  # (a reset's one or two slots: row writes cost a fraction of index-array writes)
            qpos, qvel, ctrl = data.qpos, data.qvel, data.ctrl
            for slot in slots.tolist():
                qpos[slot, joints] = standing
                qvel[slot, dofs] = 0.0
                ctrl[slot, servos] = standing
            return
        rows = slots[:, None]
        data.qpos[rows, joints] = standing
        data.qvel[rows, dofs] = 0.0
        data.ctrl[rows, servos] = standing

    def _stand_columns(self) -> tuple[Any, Any, Any]:
        """The qpos, qvel and ctrl columns of :attr:`joint_names` (the same in every slot of a pack),
        each a slice where they are consecutive (an H1's are: a row write then costs a third),
        looked up once per bound world (the servos by name cost about 100 us, on every reset)."""
        assert self.world is not None, 'reset before bind'
        lookup = self.world.lookup
        if self._stand is None or self._stand[0] is not lookup:
            first = int(self.slots[0])
            servos = self.ids(self.slots[:1], 'actuator', list(self.joint_names))[0]
            self._stand = (lookup, as_slice(self.joint_qposadr[first]), as_slice(self.joint_dofadr[first]), as_slice(servos))
        return self._stand[1], self._stand[2], self._stand[3]

    def reset_walking(self, slots: np.ndarray) -> None:
        """Stop the free bases of ``slots`` and restart their walker rows (call from ``reset_slots``)."""
        qvel = self.bound_world.data.qvel
        if len(slots) <= ROW_BY_ROW:
            for slot in slots.tolist():
                dof = int(self.root_dofadr[slot])
                qvel[slot, dof:dof + 6] = 0.0
        else:
            qvel[slots[:, None], self.root_dofadr[slots][:, None] + np.arange(6)] = 0.0
        self.walker.reset(slots)
        # Each slot's policy ticks from its episode's start, as in a fresh world, so an episode's
        # path is the same whenever it starts and whatever else runs (a seed repeats its trajectories).
        self.walker.clock.start(slots, float(self.bound_world.data.time[slots[0]]), self.slots)

    def begin_step(self) -> None:
        if self.walker is not None and len(self.slots):
            self.walker.begin_step(self.slots)

    def before_physics(self) -> None:
        walker, slots = self.walker, self.slots
        # (the slots keep the world's one time; each ticks on its own episode's 50 Hz schedule)
        if walker is not None and len(slots):
            ticking = walker.tick_due(slots, float(self.bound_world.data.time[slots[0]]))
            if ticking is not None:
                walker.tick(ticking)

    def quiet_steps(self, limit: int) -> int:
        """The steps after the coming one before the walker's next tick: ``begin_step`` gives each
        slot its held command again (nothing else sets one on a quiet step), ``before_physics``
        ticks only when the tick is due."""
        walker, slots = self.walker, self.slots
        if walker is None or not len(slots):
            return limit
        return walker.steps_before_tick(slots, float(self.bound_world.data.time[slots[0]]), float(self.sim.physics_dt), limit)

    @observes_by_need
    def get_obs(self, slots: np.ndarray) -> dict[str, Any]:
        obs = super().get_obs(slots)
        wanted = self.observed_entries
        if self.walker is not None and self.walker.policy is None and len(slots) and (wanted is None or 'policy_obs' in wanted):
            # Trained from outside: what the policy will see at the next tick.
            obs['policy_obs'] = self.walker.observe(slots)
        return obs


__all__ = ['WalkerDrivenRobot']
