"""The walking controller's runtime for all H1s of a pack: gait clocks, commands, the policy tick.

One :class:`H1Walker` serves every slot of a robot group. Every :data:`~.gait.CONTROL_DT` of
simulated time from each slot's episode start (:mod:`~internutopia_extension.robots.policy_clock`:
one schedule for all slots while their episodes started on it) it builds the observation of every
robot ticking (:func:`~.gait.observe`), gets the actions (one batched onnxruntime call of the
policy, or the actions a training loop left in :attr:`H1Walker.pending_action`), and writes the leg
servo targets.
:meth:`H1Walker.state` gathers what a reward or a fall check reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from internutopia_extension.robots.h1_locomotion import gait
from internutopia_extension.robots.h1_locomotion.model import FEET
from internutopia_extension.robots.h1_locomotion.tick_kernel import CompiledTick, compiled_tick
from internutopia_extension.robots.onnx_threads import load_onnxruntime, policy_session_options
from internutopia_extension.robots.policy_clock import PolicyClock
from internutopia_extension.robots.stand_hold import StandHold, StandHoldSpec
from internutopia_extension.robots.walk_state_kernel import CompiledWalkState, compiled_walk_state

#: Up to this many slots, a reset writes the walker's and the world's rows slot by slot.
ROW_BY_ROW = 4
#: Where the policy this project trained lives (next to the script that trained it).
POLICY_PATH = Path(__file__).resolve().parent / 'policy' / 'h1_walk.onnx'


class OnnxPolicy:
    """An exported walking policy: ``(k, OBS_SIZE)`` observations -> ``(k, ACTION_SIZE)`` actions.

    ``symmetric`` (the default) runs it as the mean of itself and its mirror image: each robot's
    action is averaged with the mirror of the action the network gives the robot's mirror image
    (:func:`~.gait.mirror_observation`, :func:`~.gait.mirror_action`), both rows in one batched
    call. A network trained with ``--mirror-loss`` is nearly symmetric; the mean makes it exactly
    so, which takes the leftover bias out of its gait (a side-step as fast to the left as to the
    right, no drift sideways or turning while it walks straight). ``symmetric=False`` runs the
    network as it is (for a policy trained without the mirror loss, whose two sides may differ).
    The network runs on one onnxruntime thread, so a robot's action never depends on the other rows
    of the call; ``intra_op_threads`` asks for more (:mod:`~internutopia_extension.robots.onnx_threads`).

    >>> policy = OnnxPolicy(POLICY_PATH)
    >>> obs = np.zeros((1, gait.OBS_SIZE), dtype=np.float32)
    >>> obs[0, 10], obs[0, gait.CLOCK_COLUMN:] = 0.5, (1.0, 0.0)  # a side-step command, mid-stride
    >>> bool(np.allclose(policy(gait.mirror_observation(obs)), gait.mirror_action(policy(obs)), atol=1e-6))
    True
    """

    def __init__(self, path: str | Path, symmetric: bool = True, gait_module: Any = gait, robot: str = 'H1',
                 intra_op_threads: int = 1) -> None:
        onnxruntime = load_onnxruntime()
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f'{robot} walking policy {path} does not exist; train one with '
                                    f'python -m internutopia_extension.robots.h1_locomotion.policy.train --robot {robot.lower()}')
        gait = self.gait = gait_module
        options, threads = policy_session_options(intra_op_threads)
        #: The intra-op threads one call uses (see :mod:`~internutopia_extension.robots.onnx_threads`).
        self.intra_op_threads: int = threads
        self.session = onnxruntime.InferenceSession(str(path), options, providers=['CPUExecutionProvider'])
        self.input_name = self.session.get_inputs()[0].name
        self._output_names = [self.session.get_outputs()[0].name]
        recorded = self.session.get_modelmeta().custom_metadata_map.get(gait.ACTION_SCALE_METADATA)
        if recorded is not None and not np.allclose(json.loads(recorded), gait.ACTION_SCALE):
            raise ValueError(f'{robot} walking policy {path} was trained with leg action scales {json.loads(recorded)}; this walker '
                             f'drives the joints with {gait.ACTION_SCALE.tolist()} (gait.ACTION_SCALE, {list(gait.LEG_JOINTS)}): '
                             'retrain it, or start a new run from it with train --init-from')
        self.symmetric = symmetric

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        if not self.symmetric:
            return self._run(obs)
        both = self._run(np.concatenate([obs, self.gait.mirror_observation(obs)]))
        return 0.5 * (both[:len(obs)] + self.gait.mirror_action(both[len(obs):]))

    def _run(self, obs: np.ndarray) -> np.ndarray:
        return np.asarray(self.run(obs), dtype=float)

    def run(self, obs: np.ndarray) -> np.ndarray:
        """The network alone on ``(k, OBS_SIZE)`` float32 rows: its ``(k, ACTION_SIZE)`` float32
        output, no mirror mean (what the compiled tick feeds its own mean)."""
        return self.session.run(self._output_names, {self.input_name: obs})[0]


@dataclass
class WalkState:
    """What a reward or a fall check reads of ``k`` walking H1s (pelvis frame unless said)."""

    height: np.ndarray  #: pelvis height above the slot's floor (k,)
    gravity: np.ndarray  #: projected gravity (k, 3)
    lin_vel: np.ndarray  #: pelvis linear velocity in its heading frame (k, 3)
    ang_vel: np.ndarray  #: pelvis angular velocity, pelvis frame (k, 3)
    leg_q: np.ndarray  #: (k, 10)
    leg_dq: np.ndarray  #: (k, 10)
    action: np.ndarray  #: this tick's action (k, 10)
    last_action: np.ndarray  #: the tick before's (k, 10)
    command: np.ndarray  #: the command the legs follow (ramped towards the requested one) (k, 3)
    stance: np.ndarray  #: feet that should be down (k, feet) bool
    moving: np.ndarray  #: the gait clock runs (told to move, or finishing a stride) (k,) bool
    touch: np.ndarray  #: sole normal force, N (k, feet)
    foot_height: np.ndarray  #: sole heights (k, 2)
    foot_speed: np.ndarray  #: sole horizontal speeds (k, 2)
    foot_lateral: np.ndarray  #: soles' sideways offsets from the pelvis in its heading frame, m, left + (k, 2)

    @classmethod
    def empty(cls, k: int, legs: int, feet: int) -> WalkState:
        """A state of ``k`` robots to fill (C-contiguous, uninitialised)."""
        return cls(height=np.empty(k), gravity=np.empty((k, 3)), lin_vel=np.empty((k, 3)), ang_vel=np.empty((k, 3)),
                   leg_q=np.empty((k, legs)), leg_dq=np.empty((k, legs)), action=np.empty((k, legs)),
                   last_action=np.empty((k, legs)), command=np.empty((k, 3)), stance=np.empty((k, feet), dtype=bool),
                   moving=np.empty(k, dtype=bool), touch=np.empty((k, feet)), foot_height=np.empty((k, feet)),
                   foot_speed=np.empty((k, feet)), foot_lateral=np.empty((k, feet)))


class H1Walker:
    """Gait clocks, commands and the 50 Hz policy tick of one H1 group (``env_num`` rows).

    Robot-generic: another legged robot subclasses it with its own :attr:`gait` module and
    :attr:`feet` (Aliengo's :class:`~internutopia_extension.robots.aliengo_locomotion.walker.AliengoWalker`).

    Args:
        env_num: rows of the per-slot arrays.
        policy: an :class:`OnnxPolicy`, or ``None``: the actions are :attr:`pending_action`
            (what a training loop sets through the ``leg_action`` controller).
        stand_hold: hold a robot told to stand at the spot it stopped at, when the robot has a
            :attr:`stand_hold_spec` and runs a policy (``False``: the policy alone).

    A command given with ``hold=True`` (a task's schedule) stays until another replaces it; one
    given for a step (``move_by_speed``) lasts that step, after which the held command (zero
    unless a task set one: "stand") comes back. The legs follow :attr:`followed`, which moves
    towards the requested :attr:`command` at :data:`~.gait.COMMAND_RATE` each tick.
    """

    #: The robot's gait module (observation, actions, clock, command limits; :mod:`.gait`'s names)
    #: and its feet (the prefixes of the model's ``{foot}_sole_*`` sensors).
    gait: Any = gait
    feet: tuple[str, ...] = FEET
    #: How a robot running its policy holds the spot it was told to stand at (:mod:`..stand_hold`);
    #: ``None``: the policy alone stands (H1's does not creep). Never with a training loop's actions.
    stand_hold_spec: StandHoldSpec | None = None

    def __init__(self, env_num: int, policy: OnnxPolicy | None, stand_hold: bool = True) -> None:
        gait = self.gait
        self.policy = policy
        self.command = np.zeros((env_num, 3))
        self.held_command = np.zeros((env_num, 3))
        self.followed = np.zeros((env_num, 3))
        self.phase = np.zeros(env_num)
        self.action = np.zeros((env_num, gait.ACTION_SIZE))
        self.last_action = np.zeros((env_num, gait.ACTION_SIZE))
        self.pending_action = np.zeros((env_num, gait.ACTION_SIZE))
        spec = self.stand_hold_spec
        self.stand_hold = StandHold(spec, env_num) if stand_hold and spec is not None and policy is not None else None
        #: The 50 Hz clocks of the policy's ticks (each slot's from its episode's start).
        self.clock = PolicyClock(self.gait.CONTROL_DT, env_num)
        #: The compiled observation and tick (:mod:`.tick_kernel`), set when bound; ``None``: numpy.
        self.compiled: CompiledTick | None = None
        #: The compiled :meth:`state` (:mod:`~internutopia_extension.robots.walk_state_kernel`), set when bound; ``None``: numpy.
        self.compiled_state: CompiledWalkState | None = None
        # begin_step's slots when they were every row in order (then one whole-array copy serves).
        self._all_rows: np.ndarray | None = None

    def bind(self, data: Any, lookup: Any, prefix: str, root_qposadr: int, root_dofadr: int, time: float | None) -> None:
        """Look up the state columns the walker reads (``prefix``: the robot's name prefix). The
        policy clock starts at ``time`` (a group bound with none of its slots running before), or,
        with ``None``, keeps its schedule (slots of the group run on through a change of its pack's
        slots: see :func:`~internutopia_extension.robots.policy_clock.keeps_running`)."""
        self.data = data
        legs = lookup.joints([prefix + name for name in self.gait.LEG_JOINTS])
        qpos, dof = legs.qposadr.astype(np.intp), legs.dofadr.astype(np.intp)
        if not (np.all(np.diff(qpos) == 1) and np.all(np.diff(dof) == 1)):
            raise ValueError(f'the leg joints of {prefix!r} are not one run of the state; the walking model changed')
        self._legs_q = slice(int(qpos[0]), int(qpos[0]) + len(qpos))
        self._legs_v = slice(int(dof[0]), int(dof[0]) + len(dof))
        actuators = lookup.ids('actuator', [prefix + name for name in self.gait.LEG_JOINTS]).astype(np.intp)
        self._legs_ctrl = slice(int(actuators[0]), int(actuators[0]) + len(actuators))
        if not np.array_equal(actuators, np.arange(actuators[0], actuators[0] + len(actuators))):
            raise ValueError(f'the leg actuators of {prefix!r} are not one run; the walking model changed')
        self._root_q, self._root_v = root_qposadr, root_dofadr
        sensor = {name: lookup.sensor(prefix + name) for foot in self.feet for name in
                  (f'{foot}_sole_touch', f'{foot}_sole_pos', f'{foot}_sole_vel')}
        self._touch = np.array([sensor[f'{foot}_sole_touch'].adr for foot in self.feet], dtype=np.intp)
        self._foot_pos = np.array([sensor[f'{foot}_sole_pos'].adr for foot in self.feet], dtype=np.intp)
        self._foot_vel = np.array([sensor[f'{foot}_sole_vel'].adr for foot in self.feet], dtype=np.intp)
        if time is not None:
            self.clock.restart(time)
        self.compiled = compiled_tick(self)
        self.compiled_state = compiled_walk_state(self, WalkState.empty(0, len(self.gait.LEG_JOINTS), len(self.feet)))

    def reset(self, slots: np.ndarray) -> None:
        """Slots taking a new episode: standing, clocks at 0, no command."""
        if self.stand_hold is not None:
            self.stand_hold.reset(slots)
        if len(slots) <= ROW_BY_ROW:  # (a reset's one or two slots: row writes cost a fraction of index-array writes)
            ctrl, legs, standing = self.data.ctrl, self._legs_ctrl, self.gait.LEG_STANDING
            for slot in slots.tolist():
                self.command[slot] = self.held_command[slot] = self.followed[slot] = 0.0
                self.phase[slot] = 0.0
                self.action[slot] = self.last_action[slot] = self.pending_action[slot] = 0.0
                ctrl[slot, legs] = standing
            return
        self.command[slots] = self.held_command[slots] = self.followed[slots] = 0.0
        self.phase[slots] = 0.0
        self.action[slots] = self.last_action[slots] = self.pending_action[slots] = 0.0
        self.data.ctrl[slots[:, None], np.arange(self._legs_ctrl.start, self._legs_ctrl.stop)] = self.gait.LEG_STANDING

    def set_command(self, slots: np.ndarray, command: np.ndarray, hold: bool = False) -> None:
        """Velocity commands ``(k, 3)`` for ``slots``, clipped to the trained range: for this step,
        or (``hold``) until replaced."""
        gait = self.gait
        if self.is_all_rows(slots) and np.shape(command) == self.command.shape:
            # (every step's path: two ufuncs into place rather than np.clip's wrapper and a scatter)
            np.minimum(np.maximum(command, gait.COMMAND_LOW), gait.COMMAND_HIGH, out=self.command)
            if hold:
                np.copyto(self.held_command, self.command)
            return
        clipped = np.minimum(np.maximum(command, gait.COMMAND_LOW), gait.COMMAND_HIGH)  # (np.clip's wrapper costs more)
        self.command[slots] = clipped
        if hold:
            self.held_command[slots] = clipped

    def is_all_rows(self, slots: np.ndarray) -> bool:
        """Whether ``slots`` is every row in order. A read-only array found so is remembered by
        identity (a robot group's slots, frozen until its slots change), so asking again is free."""
        if slots is self._all_rows:
            return True
        if type(slots) is np.ndarray and len(slots) == len(self.command) and np.array_equal(slots, np.arange(len(slots))):
            if not slots.flags.writeable:
                self._all_rows = slots
            return True
        return False

    def begin_step(self, slots: np.ndarray) -> None:
        """A new env step: each slot's command is its held one until a controller gives another."""
        if self.is_all_rows(slots):
            np.copyto(self.command, self.held_command)
            return
        self.command[slots] = self.held_command[slots]

    def observe(self, slots: np.ndarray) -> np.ndarray:
        """The policy's observation of ``slots`` now (what the next tick feeds the policy)."""
        if self.compiled is not None:
            return self.compiled.observe(np.asarray(slots, dtype=np.intp)).copy()
        data = self.data
        q0, v0 = self._root_q, self._root_v
        quat = data.qpos[slots, q0 + 3:q0 + 7]
        lin_vel = self.gait.to_body(quat, data.qvel[slots, v0:v0 + 3])
        ang_vel = data.qvel[slots, v0 + 3:v0 + 6]
        leg_q = data.qpos[slots, self._legs_q]
        leg_dq = data.qvel[slots, self._legs_v]
        return self.gait.observe(quat, lin_vel, ang_vel, leg_q, leg_dq, self.action[slots], self.followed[slots], self.phase[slots])

    def tick_due(self, slots: np.ndarray, time: float) -> np.ndarray | None:
        """Which of ``slots`` take their 50 Hz tick on the step starting at ``time`` (``None``:
        none; ``slots`` itself: all of them); their ticks are taken."""
        return self.clock.due_slots(slots, time)

    def steps_before_tick(self, slots: np.ndarray, time: float, dt: float, limit: int) -> int:
        """How many of the physics steps after the one starting at ``time`` (each ``dt`` long; at
        most ``limit``) start before the next tick of any of ``slots`` (:meth:`tick_due` ``None`` on each)."""
        return self.clock.steps_before(time, dt, limit, slots)

    def tick(self, slots: np.ndarray) -> None:
        """One policy tick for ``slots``: observe, act, set the leg servo targets; then ramp the
        followed commands and advance the clocks for the next tick (so :meth:`observe` between ticks
        is what the next tick feeds the policy). The compiled tick (:mod:`.tick_kernel`) does the
        same arithmetic in two passes around the network."""
        if self.compiled is not None:
            self.compiled.tick(np.asarray(slots, dtype=np.intp))
            return
        if self.policy is not None:
            action = self.policy(self.observe(slots))
        else:
            action = self.pending_action[slots]
        action = np.clip(action, -1.0, 1.0)
        self.last_action[slots] = self.action[slots]
        self.action[slots] = action
        self.data.ctrl[slots, self._legs_ctrl] = self.gait.leg_targets(action)
        command = self.held_command_of(slots, self.command[slots])
        self.followed[slots] = self.gait.ramp_command(self.followed[slots], command)
        moving = np.linalg.norm(self.followed[slots], axis=1) >= self.gait.STAND_COMMAND
        self.phase[slots] = self.gait.advance_phase(self.phase[slots], moving)

    def held_command_of(self, slots: np.ndarray, command: np.ndarray) -> np.ndarray:
        """The command ``(k, 3)`` that ``slots`` follow this tick for their requested ``command``:
        itself, or with a stand hold, a robot told to stand led back to its spot (the numpy and
        the compiled tick both ask here, on the same inputs)."""
        if self.stand_hold is None:
            return command
        return self.stand_hold.apply(slots, command, *self._pelvis_xy_yaw(slots), self.phase[slots] == 0.0, self.gait.CONTROL_DT)

    def _pelvis_xy_yaw(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pelvises' world position ``(k, 2)`` and heading ``(k,)`` (exact for upright ones)."""
        q0 = self._root_q
        qpos = self.data.qpos[slots]
        return qpos[:, q0:q0 + 2], 2.0 * np.arctan2(qpos[:, q0 + 6], qpos[:, q0 + 3])

    def state(self, slots: np.ndarray) -> WalkState:
        """What rewards and fall checks read of ``slots`` (see :class:`WalkState`): one compiled
        pass when numba serves (:mod:`~internutopia_extension.robots.walk_state_kernel`), else
        :meth:`numpy_state`, the reference."""
        compiled = self.compiled_state
        if compiled is None:
            return self.numpy_state(slots)
        slots = np.asarray(slots, dtype=np.intp)
        state = WalkState.empty(len(slots), self._legs_q.stop - self._legs_q.start, len(self.feet))
        compiled.fill(slots, state)
        return state

    def numpy_state(self, slots: np.ndarray) -> WalkState:
        """:meth:`state` in numpy."""
        data = self.data
        q0, v0 = self._root_q, self._root_v
        # One row gather per state array, then column slices of those copies: a 2-D fancy index
        # per quantity cost several times as much, and this runs on every control tick.
        qpos, qvel, sensors = data.qpos[slots], data.qvel[slots], data.sensordata[slots]
        quat = qpos[:, q0 + 3:q0 + 7]
        world_vel = qvel[:, v0:v0 + 3]
        heading = 2.0 * np.arctan2(quat[:, 3], quat[:, 0])  # yaw of the pelvis (exact for an upright one)
        cos, sin = np.cos(heading), np.sin(heading)
        lin_vel = np.stack([cos * world_vel[:, 0] + sin * world_vel[:, 1], -sin * world_vel[:, 0] + cos * world_vel[:, 1],
                            world_vel[:, 2]], axis=1)
        command = self.followed[slots]
        running = self.gait.clock_running(self.phase[slots], command)
        foot_pos = sensors[:, self._foot_pos + 2]
        foot_vel_x = sensors[:, self._foot_vel]
        foot_vel_y = sensors[:, self._foot_vel + 1]
        foot_dx = sensors[:, self._foot_pos] - qpos[:, q0:q0 + 1]
        foot_dy = sensors[:, self._foot_pos + 1] - qpos[:, q0 + 1:q0 + 2]
        return WalkState(
            height=qpos[:, q0 + 2], gravity=self.gait.projected_gravity(quat), lin_vel=lin_vel,
            ang_vel=qvel[:, v0 + 3:v0 + 6], leg_q=qpos[:, self._legs_q],
            leg_dq=qvel[:, self._legs_v], action=self.action[slots], last_action=self.last_action[slots],
            command=command, stance=self.gait.expected_stance(self.phase[slots], running), moving=running,
            touch=sensors[:, self._touch], foot_height=foot_pos,
            foot_speed=np.hypot(foot_vel_x, foot_vel_y), foot_lateral=-sin[:, None] * foot_dx + cos[:, None] * foot_dy)

