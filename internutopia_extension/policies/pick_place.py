"""A scripted pick-and-place policy for a gripper arm driven by IK, vectorized over slots.

Each slot goes through the phases approach (above the object), descend, grasp (close), lift, carry
(above the goal), lower, release (open) and retreat. Each move is either a straight line of the
tool frame with a smooth speed profile, streamed as one IK target per step, or, with ``jump=True``,
the move's end sent at once as InternUtopia's scripts and InternManip's policies send waypoints
(the arm then moves at its own joint speed and acceleration limits); a jump ends once the tool
frame is within ``reach_tolerance`` of the waypoint (or after ``jump_timeout`` seconds). The policy reads only
observations (the object's position and yaw, the tool frame's position), so it runs the same on the
dict and the array APIs. While carrying it measures where the object sits in the gripper and
places the *object* (not the gripper) on the goal.

>>> import numpy as np
>>> policy = ScriptedPickPlace(physics_dt=1 / 240)
>>> policy.reset(np.array([0, 1]), goals=np.array([[0.3, -0.3, 0.025], [0.4, 0.3, 0.025]]))
>>> targets, grip = policy.act(np.array([0, 1]), object_pos=np.array([[0.5, 0.0, 0.025]] * 2),
...                            object_quat=np.array([[1.0, 0, 0, 0]] * 2), tcp_pos=np.array([[0.55, 0, 0.52]] * 2))
>>> targets.shape, grip.tolist()
((2, 7), [1.0, 1.0])
"""

from __future__ import annotations

import numpy as np

from internutopia.core.util.math import quat_multiply, quat_to_yaw, yaw_to_quat

APPROACH, DESCEND, GRASP, LIFT, CARRY, LOWER, RELEASE, RETREAT, DONE, PREGRASP, PREPLACE = range(11)
PHASE_NAMES = ('approach', 'descend', 'grasp', 'lift', 'carry', 'lower', 'release', 'retreat', 'done', 'pregrasp',
               'preplace')
#: Height (m) above the object, and above the place, of the jump mode's stops on the way down: a
#: joint-space move of a whole hover or carry height bows sideways by a centimetre or several
#: (more with long env steps, whose trajectory is coarser), enough to land a finger on a cube or
#: the held object on the table beside its goal.
PREGRASP_HEIGHT = 0.03
#: The tool pointing straight down (rotation by pi about x): fingers close along the world's y axis.
DOWN = np.array([0.0, 1.0, 0.0, 0.0])


class ScriptedPickPlace:
    """Per-slot phase machines; see the module docstring.

    Args:
        physics_dt: seconds per env step.
        speed: tool speed of free moves (m/s); ``slow_speed`` of the moves near the object.
        hover: height (m) above the object and the goal where descents start.
        carry_height: height (m) of the carry above the higher of the object's start and the goal.
        drop: height (m) above the goal at which the object is let go.
        jump: send each move's end at once instead of streaming a path.
        reach_tolerance: distance (m) of the tool frame to a jump's waypoint that ends the jump
            (once the tool frame has also slowed below ``reach_speed``, m/s).
        jump_timeout: seconds after which a jump ends even if the waypoint was not reached.
    """

    def __init__(self, physics_dt: float, speed: float = 0.35, slow_speed: float = 0.12, hover: float = 0.12,
                 carry_height: float = 0.2, drop: float = 0.004, grasp_steps: float = 0.6, release_steps: float = 0.4,
                 settle_s: float = 0.12, jump: bool = False, reach_tolerance: float = 0.004,
                 reach_speed: float = 0.02, jump_timeout: float = 4.0) -> None:
        self.dt = float(physics_dt)
        self.jump, self.reach_tolerance, self.jump_timeout = jump, reach_tolerance, jump_timeout
        self.reach_speed = reach_speed
        self.speed, self.slow_speed = speed, slow_speed
        self.hover, self.carry_height, self.drop = hover, carry_height, drop
        self.grasp_s, self.release_s, self.settle_s = grasp_steps, release_steps, settle_s
        self.phase = np.zeros(0, dtype=np.intp)
        # Per slot (rows grow with the slots seen): the goal, the current move (start, end, time
        # into it, duration), the object's offset from the tool, the tool's orientation, the grip.
        self.goal, self.start, self.end, self.offset = np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))
        self.quat = np.zeros((0, 4))
        self.t, self.duration, self.grip = np.zeros(0), np.zeros(0), np.zeros(0)
        self.last_tcp = np.zeros((0, 3))  # the tool frame's last position (its speed, for jumps)
        self._size = 0

    def _ensure(self, size: int) -> None:
        if size <= self._size:
            return
        grow = size - self._size
        self.phase = np.concatenate([self.phase, np.full(grow, DONE, dtype=np.intp)])
        for name in ('goal', 'start', 'end', 'offset', 'quat', 't', 'duration', 'grip', 'last_tcp'):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.zeros((grow, *old.shape[1:]))]))
        self._size = size

    def reset(self, slots: np.ndarray, goals: np.ndarray) -> None:
        """Start over in ``slots`` with env-local object goals ``(k, 3)`` (where the object's origin should end)."""
        slots = np.asarray(slots, dtype=np.intp)
        self._ensure(int(slots.max()) + 1 if len(slots) else 0)
        self.goal[slots] = goals
        self.phase[slots] = -1  # planned on the first act()
        self.grip[slots] = 1.0
        self.offset[slots] = 0.0

    def done(self, slots: np.ndarray) -> np.ndarray:
        """Whether each of ``slots`` finished its script."""
        return self.phase[np.asarray(slots, dtype=np.intp)] == DONE

    def act(self, slots: np.ndarray, object_pos: np.ndarray, object_quat: np.ndarray,
            tcp_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """IK targets ``(k, 7)`` (position, wxyz) and gripper commands ``(k,)`` (1 open, 0 close) for ``slots``."""
        slots = np.asarray(slots, dtype=np.intp)
        first = self.phase[slots] == -1
        if np.any(first):
            rows = slots[first]
            yaw = quat_to_yaw(object_quat[first])
            yaw = (yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4  # a cube: the nearest face pair
            self.quat[rows] = quat_multiply(yaw_to_quat(yaw), np.broadcast_to(DOWN, (len(rows), 4)))
            self._begin(rows, APPROACH, tcp_pos[first], object_pos[first] + [0.0, 0.0, self.hover], self.speed)
        self.t[slots] += self.dt
        finished = self.t[slots] >= self.duration[slots] + self.settle_s
        if self.jump:
            # A jump is over when the arm got there (a wait, when its time is up).
            moving = self.end[slots] != self.start[slots]
            slow = np.linalg.norm(tcp_pos - self.last_tcp[slots], axis=1) < self.reach_speed * self.dt
            reached = (np.linalg.norm(tcp_pos - self.end[slots], axis=1) < self.reach_tolerance) & slow
            over = np.where(moving.any(axis=1), (reached & (self.t[slots] >= self.settle_s)) | (self.t[slots] >= self.jump_timeout),
                            finished)
            finished = over & (self.phase[slots] != DONE)
        for phase in np.unique(self.phase[slots][finished]):
            rows = np.flatnonzero(finished & (self.phase[slots] == phase))
            self._advance(int(phase), slots[rows], object_pos[rows], tcp_pos[rows])
        self.last_tcp[slots] = tcp_pos
        if self.jump:
            return np.concatenate([self.end[slots], self.quat[slots]], axis=1), self.grip[slots].copy()
        s = np.clip(self.t[slots] / np.maximum(self.duration[slots], 1e-9), 0.0, 1.0)
        s = s * s * (3.0 - 2.0 * s)
        position = self.start[slots] + (self.end[slots] - self.start[slots]) * s[:, None]
        return np.concatenate([position, self.quat[slots]], axis=1), self.grip[slots].copy()

    def _begin(self, rows: np.ndarray, phase: int, start: np.ndarray, end: np.ndarray, speed: float | None,
               wait: float = 0.0) -> None:
        self.phase[rows] = phase
        self.start[rows] = start
        self.end[rows] = end
        self.t[rows] = 0.0
        self.duration[rows] = wait if speed is None else np.linalg.norm(end - start, axis=1) / speed

    def _advance(self, phase: int, rows: np.ndarray, object_pos: np.ndarray, tcp: np.ndarray) -> None:
        here = self.end[rows]
        up = np.array([0.0, 0.0, 1.0])
        if phase == APPROACH and self.jump:
            self._begin(rows, PREGRASP, here, object_pos + up * PREGRASP_HEIGHT, self.slow_speed)
        elif phase in (APPROACH, PREGRASP):
            self._begin(rows, DESCEND, here, object_pos, self.slow_speed)
        elif phase == DESCEND:
            self.grip[rows] = 0.0
            self._begin(rows, GRASP, here, here, None, self.grasp_s)
        elif phase == GRASP:
            height = np.maximum(object_pos[:, 2], self.goal[rows, 2]) + self.carry_height
            self._begin(rows, LIFT, here, np.column_stack([here[:, :2], height]), self.slow_speed)
        elif phase == LIFT:
            self.offset[rows] = object_pos - tcp  # where the object hangs in the gripper
            above = self.goal[rows] - self.offset[rows] + up * self.hover
            self._begin(rows, CARRY, here, np.column_stack([above[:, :2], here[:, 2]]), self.speed)
        elif phase == CARRY and self.jump:
            self.offset[rows] = object_pos - tcp
            self._begin(rows, PREPLACE, here, self.goal[rows] - self.offset[rows] + up * PREGRASP_HEIGHT, self.slow_speed)
        elif phase in (CARRY, PREPLACE):
            self.offset[rows] = object_pos - tcp
            self._begin(rows, LOWER, here, self.goal[rows] - self.offset[rows] + up * self.drop, self.slow_speed)
        elif phase == LOWER:
            self.grip[rows] = 1.0
            self._begin(rows, RELEASE, here, here, None, self.release_s)
        elif phase == RELEASE:
            self._begin(rows, RETREAT, here, here + up * self.hover, self.slow_speed)
        elif phase == RETREAT:
            self._begin(rows, DONE, here, here, None, np.inf)
