"""Franka IK: our batched damped least squares against ``mink`` (QP-based differential IK), side by side.

Both solve the same problems on the same Panda model (the one ``FrankaRobot`` builds): from the
home posture to ``--targets`` random reachable poses of the ``right_gripper`` frame (poses of
random joint configurations within the limits), position and orientation, joint limits enforced.
Reported per solver: the share of targets solved to 1 mm / 0.01 rad, the median errors, and the
time per target solved from home (one call over all targets for ours, one ``mink`` loop per
target). Then the streaming case a policy sends every step: ``--slots`` arms each given a target
moved 2 mm from its last one, timed per env step for all slots. ``mink`` is optional
(``pip install mink``); without it only ours runs. Last, the targets the Franka Gymnasium ids'
random actions ask for (``--workspace`` of them: positions in their workspace, the tool within
their slack of pointing down, starts near home; many out of reach) solved with restarts as the
controller does, with ``IKParams``' stall check on and off: what the stall check costs in
successes and errors, and what it saves in time.

    python -m internutopia.bench.franka_ik [--targets 200] [--slots 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from internutopia.core.backend.mujoco import MujocoLookup
from internutopia.core.config import SimConfig
from internutopia_extension.configs.robots.franka import FrankaRobotCfg
from internutopia_extension.controllers import kinematics
from internutopia_extension.controllers.kinematics import SerialChain, quat_to_mat, rotation_error
from internutopia_extension.robots.franka import HOME, FrankaRobot

POSITION_OK, ROTATION_OK = 1e-3, 1e-2


def problems(chain: SerialChain, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Reachable targets: end-frame poses of random configurations within the joint limits."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(chain.lower, chain.upper, size=(count, chain.size))
    position, rotation = kinematics.forward_kinematics(chain, q)
    return position, rotation


def errors(chain: SerialChain, q: np.ndarray, position: np.ndarray, rotation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    reached_pos, reached_rot = kinematics.forward_kinematics(chain, q)
    return np.linalg.norm(reached_pos - position, axis=1), np.linalg.norm(rotation_error(rotation, reached_rot), axis=1)


def ours(chain: SerialChain, position: np.ndarray, rotation: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, float]:
    """As the controller solves: from ``start``, then the restart seeds for the rows left far off."""
    rest = np.broadcast_to(np.asarray(HOME), start.shape)
    weight = np.ones(len(start))
    kinematics.solve_ik(chain, start[:1], position[:1], rotation[:1], weight[:1], rest[:1])  # compile outside the timing
    began = time.perf_counter()
    q = kinematics.solve_ik_restarts(chain, start, position, rotation, weight, rest)[0]
    return q, time.perf_counter() - began


class MinkSolver:
    """One ``mink`` configuration per arm; ``solve`` iterates ``solve_ik`` until converged."""

    def __init__(self, model, count: int, iterations: int = 100) -> None:
        import mink

        self.mink, self.model, self.iterations = mink, model, iterations
        self.configs = [mink.Configuration(model) for _ in range(count)]
        self.task = mink.FrameTask('right_gripper', 'site', position_cost=1.0, orientation_cost=1.0, lm_damping=1e-6)
        self.limits = [mink.ConfigurationLimit(model)]
        self.arm = np.arange(7)

    def solve(self, index: int, q0: np.ndarray, position: np.ndarray, rotation: np.ndarray) -> np.ndarray:
        mink, config = self.mink, self.configs[index]
        q = config.q.copy()
        q[self.arm] = q0
        config.update(q)
        target = mink.SE3.from_rotation_and_translation(mink.SO3.from_matrix(rotation), position)
        self.task.set_target(target)
        for _ in range(self.iterations):
            error = self.task.compute_error(config)
            if np.linalg.norm(error[:3]) < 1e-4 and np.linalg.norm(error[3:]) < 1e-3:
                break
            velocity = mink.solve_ik(config, [self.task], 1.0, 'daqp', damping=1e-3, limits=self.limits)
            config.integrate_inplace(velocity, 1.0)
        return config.q[self.arm].copy()


def workspace_stalls(chain: SerialChain, count: int = 640, seed: int = 1) -> dict[str, dict[str, float]]:
    """The Franka ids' kind of targets (see the module docstring) solved by ``solve_ik_restarts``
    with the stall check (``IKParams()``) and without (``stall_iterations=0``): per variant the rows
    solved, the mean and the worst error (m, plus 0.1 m per rad) of the rows that the run without it
    did not solve, the worst error those rows gain with it, and the seconds of the solve (the best of three)."""
    from internutopia.envs.manipulation import DOWN, ORIENTATION_SLACK, WORKSPACE

    rng = np.random.default_rng(seed)
    targets = rng.uniform(WORKSPACE[0], WORKSPACE[1], (count, 3))
    quat = np.array(DOWN) + rng.uniform(-ORIENTATION_SLACK, ORIENTATION_SLACK, (count, 4))
    rotation = quat_to_mat(quat / np.linalg.norm(quat, axis=1, keepdims=True))
    start, rest, weight = np.tile(HOME, (count, 1)) + rng.normal(0.0, 0.3, (count, 7)), np.tile(HOME, (count, 1)), np.ones(count)
    out: dict[str, dict[str, float]] = {}
    results = {}
    for name, params in (('without stall check', kinematics.IKParams(stall_iterations=0)), ('with stall check', kinematics.IKParams())):
        kinematics.solve_ik_restarts(chain, start[:8], targets[:8], rotation[:8], weight[:8], rest[:8], params)  # warm
        times = []
        for _ in range(3):
            began = time.perf_counter()
            _, pos_err, rot_err = kinematics.solve_ik_restarts(chain, start, targets, rotation, weight, rest, params)
            times.append(time.perf_counter() - began)
        results[name] = ((pos_err <= params.success_position) & (rot_err <= params.success_rotation), pos_err + 0.1 * rot_err, min(times))
    unsolved = ~results['without stall check'][0]
    for name, (solved, error, seconds) in results.items():
        out[name] = {'solved': int(np.count_nonzero(solved)), 'targets': count, 'seconds': seconds,
                     'unsolved_mean_error': float(error[unsolved].mean()) if unsolved.any() else 0.0,
                     'unsolved_worst_extra': float(np.max(error[unsolved] - results['without stall check'][1][unsolved]))
                     if unsolved.any() else 0.0}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--targets', type=int, default=200)
    parser.add_argument('--slots', type=int, default=64)
    parser.add_argument('--steps', type=int, default=100, help='streaming steps to time')
    parser.add_argument('--workspace', type=int, default=640, help="targets of the Franka ids' kind (0: none)")
    args = parser.parse_args()
    model = FrankaRobot(FrankaRobotCfg(), 1, SimConfig()).build_spec().compile()
    chain = SerialChain.from_model(MujocoLookup(model), 'panda_link0', 'right_gripper')
    position, rotation = problems(chain, args.targets)
    start = np.tile(HOME, (args.targets, 1))
    rows = []
    q, seconds = ours(chain, position, rotation, start)
    rows.append(('ours (batched DLS' + (', numba)' if kinematics._ik_kernel.available else ', numpy)'), q, seconds))
    try:
        solver = MinkSolver(model, 1)
    except ImportError:
        solver = None
    if solver is not None:
        began = time.perf_counter()
        q = np.array([solver.solve(0, start[i], position[i], rotation[i]) for i in range(args.targets)])
        rows.append(('mink (daqp QP)', q, time.perf_counter() - began))
    print(f'{args.targets} reachable targets from home (position and orientation, joint limits):')
    for name, q, seconds in rows:
        pos_err, rot_err = errors(chain, q, position, rotation)
        solved = np.mean((pos_err < POSITION_OK) & (rot_err < ROTATION_OK))
        print(f'  {name:26s} solved {solved:6.1%}  median error {np.median(pos_err) * 1e3:.3f} mm / '
              f'{np.median(rot_err):.4f} rad  {seconds / args.targets * 1e3:8.3f} ms per target')

    # Streaming: every slot's target moves 2 mm per step along a circle; warm start from the last answer.
    n = args.slots
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False)
    centre = np.column_stack([0.5 + 0.1 * np.cos(angle), 0.1 * np.sin(angle), np.full(n, 0.3)])
    down = np.broadcast_to(quat_to_mat(np.array([0.0, 1.0, 0.0, 0.0])), (n, 3, 3)).copy()
    rest = np.tile(HOME, (n, 1))
    q_ours = kinematics.solve_ik(chain, rest, centre, down, np.ones(n), rest)[0]
    q_mink = q_ours.copy()
    timings = {}
    began = time.perf_counter()
    for step in range(1, args.steps + 1):
        target = centre + 0.002 * step * np.column_stack([np.cos(angle + np.pi / 2), np.sin(angle + np.pi / 2), np.zeros(n)])
        q_ours = kinematics.solve_ik(chain, q_ours, target, down, np.ones(n), rest)[0]
    timings['ours'] = (time.perf_counter() - began) / args.steps
    if solver is not None:
        solver = MinkSolver(model, n)
        began = time.perf_counter()
        for step in range(1, args.steps + 1):
            target = centre + 0.002 * step * np.column_stack([np.cos(angle + np.pi / 2), np.sin(angle + np.pi / 2), np.zeros(n)])
            q_mink = np.array([solver.solve(i, q_mink[i], target[i], down[i]) for i in range(n)])
        timings['mink'] = (time.perf_counter() - began) / args.steps
    print(f'streaming targets (2 mm per step), {n} slots: ' + ', '.join(f'{k} {v * 1e3:.3f} ms per step' for k, v in timings.items()))
    if args.workspace:
        print(f"{args.workspace} targets of the Franka ids' random actions (many out of reach), solved with restarts:")
        for name, row in workspace_stalls(chain, args.workspace).items():
            print(f"  {name:20s} solved {row['solved']}/{row['targets']}  the unsolved rows' error: mean "
                  f"{row['unsolved_mean_error'] * 1e3:.1f} mm, worst gain {row['unsolved_worst_extra'] * 1e3:.1f} mm  "
                  f"{row['seconds'] * 1e3:7.1f} ms")


if __name__ == '__main__':
    main()
