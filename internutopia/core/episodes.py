"""Point-goal navigation episodes sampled from a scene's free space.

:func:`generate_point_nav_episodes` samples, per episode, a scene, a start pose and a goal on the
free-space grid of :func:`~internutopia.core.backend.mujoco.scene_info.free_cells` (points at least
``robot_radius`` from every obstacle), such that the goal is reachable from the start through free
space and its grid geodesic distance is within ``[min_distance, max_distance]``. The episode's
``shortest_path_length`` is that grid path shortened by line-of-sight (string pulling against the
obstacle footprints inflated by ``robot_radius``), so it is close to the true shortest path of a disc
of that radius. Everything is deterministic given ``seed``.

Command line (writes a full :class:`~internutopia.core.config.Config` as YAML)::

    python -m internutopia.core.episodes --n 32 --seed 0 --out configs/jetbot_point_nav.yaml

Scene paths are written as given; the command line makes the package's own scenes relative to the
current directory when they are under it (so run the YAML from the same directory, e.g. the
repository root).
"""

from __future__ import annotations

import argparse
import math
import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from internutopia.core.config import Config, ObjectCfg, RobotCfg, SimConfig, TaskCfg, TypedCfg
from internutopia.core.config.files import as_package_path
from internutopia.core.config.fresh_episodes import FreshEpisodes
from internutopia.core.grid_paths import dijkstra, grid_adjacency
from internutopia.core.plugins import load_extensions
from internutopia.macros import gm

#: The scenes episodes are drawn from by default: flat ground, two rooms (USD), an office (MJCF).
DEFAULT_SCENES: tuple[str | None, ...] = (
    None,
    os.path.join(gm.ASSET_PATH, 'scenes', 'two_rooms.usda'),
    os.path.join(gm.ASSET_PATH, 'scenes', 'office.xml'),
)
#: Sampling region (xmin, ymin, xmax, ymax) of a scene without obstacles (e.g. the flat ground).
DEFAULT_OPEN_BOUNDS = (-3.0, -3.0, 3.0, 3.0)
#: Bytes of geodesics (distances and parents from one start) a scene's free space keeps: all of
#: the flat ground's 625 starts (10 KB each), a few hundred of a large scene's.
GEODESICS_BYTES = 16 * 1024 * 1024


class FreeSpace:
    """The free-space grid of one scene: cells, connectivity, geodesic distances and paths."""

    def __init__(self, scene: str | None, resolution: float = 0.25, robot_radius: float = 0.3,
                 bounds: Sequence[float] | None = None) -> None:
        from internutopia.core.backend.mujoco.scene_info import free_cells, obstacle_boxes
        from internutopia.core.backend.mujoco.scene_loader import scene_to_spec

        model = scene_to_spec(scene).compile()
        self.scene = scene
        self.resolution = float(resolution)
        self.robot_radius = float(robot_radius)
        # Dynamic bodies (e.g. a crate) count at their initial pose: never spawn inside them.
        self.boxes = obstacle_boxes(model, include_dynamic=True)
        if bounds is None:
            bounds = DEFAULT_OPEN_BOUNDS if len(self.boxes) == 0 else (*self.boxes[:, :2].min(axis=0), *self.boxes[:, 2:].max(axis=0))
        self.lo = np.asarray(bounds[:2], dtype=float)
        self.points = free_cells(model, bounds, resolution=resolution, robot_radius=robot_radius, include_dynamic=True)
        if len(self.points) == 0:
            raise ValueError(f'scene {scene!r} has no free space for a robot of radius {robot_radius} m in {tuple(bounds)}')
        self.cells = np.rint((self.points - self.lo) / self.resolution).astype(int)
        self.index = {tuple(c): k for k, c in enumerate(self.cells)}
        self.adjacency = grid_adjacency(self.cells, self.resolution)  # the moves, listed once for every geodesic
        self._geodesics: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # by start cell (see geodesic)

    def geodesic(self, start: int) -> tuple[np.ndarray, np.ndarray]:
        """Dijkstra over the 8-connected free grid (no corner cutting): distances (m) and parents
        (:func:`~internutopia.core.grid_paths.dijkstra`, compiled when numba is there), read-only.

        Kept per start, up to :data:`GEODESICS_BYTES` per scene (the oldest go first): an endless
        sampler draws its starts from the same few hundred cells again and again.
        """
        kept = self._geodesics.get(start)
        if kept is not None:
            return kept
        dist, parent = dijkstra(self.adjacency, start)
        dist.flags.writeable = parent.flags.writeable = False
        if (len(self._geodesics) + 1) * (dist.nbytes + parent.nbytes) <= GEODESICS_BYTES:
            self._geodesics[start] = (dist, parent)
        elif self._geodesics:
            self._geodesics.pop(next(iter(self._geodesics)))
            self._geodesics[start] = (dist, parent)
        return dist, parent

    def visible(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether a disc of ``robot_radius`` can slide straight from ``a`` to ``b`` (xy)."""
        if len(self.boxes) == 0:
            return True
        samples = max(2, int(np.ceil(np.linalg.norm(b - a) / (self.resolution / 4))) + 1)
        p = a + np.linspace(0.0, 1.0, samples)[:, None] * (b - a)
        d = np.maximum(np.maximum(self.boxes[None, :, :2] - p[:, None], p[:, None] - self.boxes[None, :, 2:]), 0.0)
        return bool(np.all((d * d).sum(axis=2) >= self.robot_radius ** 2 - 1e-9))

    def path(self, parent: np.ndarray, goal: int) -> np.ndarray:
        """The grid path to ``goal`` ``(m, 2)`` shortened by line of sight (greedy string pulling)."""
        chain = [goal]
        while parent[chain[-1]] >= 0:
            chain.append(int(parent[chain[-1]]))
        if len(self.boxes) == 0 and len(chain) > 1:  # (nothing in the way: the start sees the goal)
            return self.points[[chain[-1], goal]]
        points = self.points[chain[::-1]]
        out, i = [points[0]], 0
        while i < len(points) - 1:
            j = len(points) - 1
            while j > i + 1 and not self.visible(points[i], points[j]):
                j -= 1
            out.append(points[j])
            i = j
        return np.array(out)


    def nearest(self, xy: Sequence[float]) -> int:
        """Index of the free point nearest to ``xy``."""
        return int(np.argmin(np.linalg.norm(self.points - np.asarray(xy, dtype=float)[:2], axis=1)))

    def shortest_path(self, start_xy: Sequence[float], goal_xy: Sequence[float]) -> np.ndarray:
        """Waypoints ``(m, 2)`` from the free point nearest ``start_xy`` to the one nearest ``goal_xy``.

        Raises:
            ValueError: the goal is not reachable from the start through free space.
        """
        start, goal = self.nearest(start_xy), self.nearest(goal_xy)
        dist, parent = self.geodesic(start)
        if not np.isfinite(dist[goal]):
            raise ValueError(f'scene {self.scene!r}: {tuple(goal_xy)} is not reachable from {tuple(start_xy)}')
        return self.path(parent, goal)


def path_length(points: np.ndarray) -> float:
    """Length of a polyline ``(m, 2)``."""
    points = np.asarray(points, dtype=float)
    if points.shape == (2, 2):  # (a straight path, the usual one: numpy's own arithmetic on two numbers, at a tenth of its cost)
        (ax, ay), (bx, by) = points.tolist()
        return math.sqrt((bx - ax) * (bx - ax) + (by - ay) * (by - ay))
    return float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum()) if len(points) > 1 else 0.0


def _config_class(family: type[TypedCfg], type_name: str) -> Any:
    """The config class an installed extension registered for ``type_name`` in ``family``."""
    load_extensions()
    cls = family.config_class_for(type_name)
    if cls is None:
        raise ValueError(f'no {family.__name__} class for type {type_name!r}: the extension that registers it '
                         f'(internutopia_extension) is not loaded; see internutopia.core.plugins')
    return cls


def generate_point_nav_episodes(n: int, seed: int, scenes: Sequence[str | None] = DEFAULT_SCENES,
                                robot_cfg: Any = None, min_distance: float = 1.0, max_distance: float = 4.0,
                                max_steps: int = 4000, success_distance: float = 0.3, resolution: float = 0.25,
                                robot_radius: float = 0.3, goal_marker: bool = True, metrics: list | None = None,
                                bounds: dict[str | None, Sequence[float]] | None = None) -> list[TaskCfg]:
    """``n`` ``PointNavTaskCfg`` episodes, cycling through ``scenes`` (``None``: flat ground), as a
    :class:`~internutopia.core.config.fresh_episodes.FreshEpisodes` (a list the Gymnasium envs' queue takes
    without copying; every episode has objects of its own). The same as
    ``PointNavEpisodes(scenes, ...).draw(n, seed)`` (:class:`PointNavEpisodes`, which a sampler
    drawing batch after batch keeps).

    Args:
        n: number of episodes.
        seed: seed of the sampler; the same arguments give the same episodes.
        scenes: scene file paths (``.usd``/``.usda``/``.usdc``/``.xml``) or ``None`` for the ground.
        robot_cfg: the robot (default ``JetbotRobotCfg()``); its ``position`` z is kept, x/y and
            yaw are sampled.
        min_distance, max_distance: range of the start-goal geodesic distance (m, grid path).
        max_steps, success_distance: copied into every episode.
        resolution, robot_radius: of the free-space grid (m).
        goal_marker: add a ``VisualCube`` named ``goal_marker`` at the goal (visual only; its
            pose is state, so it never forces a rebuild).
        metrics: the episodes' metric configs (default: PointNavTaskCfg's).
        bounds: per scene, the sampling region (xmin, ymin, xmax, ymax); default: the obstacles'
            bounding box, or :data:`DEFAULT_OPEN_BOUNDS` for a scene without obstacles.

    Raises:
        ValueError: bad arguments, or a scene where no start has a goal in range.
    """
    return PointNavEpisodes(scenes, robot_cfg=robot_cfg, min_distance=min_distance, max_distance=max_distance,
                            max_steps=max_steps, success_distance=success_distance, resolution=resolution,
                            robot_radius=robot_radius, goal_marker=goal_marker, metrics=metrics, bounds=bounds).draw(n, seed)


class PointNavEpisodes:
    """Point-nav episodes of fixed arguments (those of :func:`generate_point_nav_episodes`), drawn
    batch by batch with :meth:`draw`.

    Each episode is its scene's template (validated once, on the first draw in that scene, on a
    private copy of the robot and metrics) with its own draws put in: numbers of the validated
    types, so the copy is what validating each episode would give (tests/test_batched_resets.py
    checks it) at a small part of the cost. An episode's own objects: its robot, goal marker and
    lists. The templates (and so the episodes' family, which tells the runner they share their
    structure) are kept from draw to draw: an endless sampler validates each scene's once.

    >>> episodes = PointNavEpisodes((None,), min_distance=1.0, max_distance=2.0)
    >>> first, again = episodes.draw(4, seed=7), episodes.draw(4, seed=7)
    >>> first == again, len(first), 1.0 <= first[0].shortest_path_length <= 2.0 + 1e-9
    (True, 4, True)
    """

    def __init__(self, scenes: Sequence[str | None] = DEFAULT_SCENES, robot_cfg: Any = None, min_distance: float = 1.0,
                 max_distance: float = 4.0, max_steps: int = 4000, success_distance: float = 0.3, resolution: float = 0.25,
                 robot_radius: float = 0.3, goal_marker: bool = True, metrics: list | None = None,
                 bounds: dict[str | None, Sequence[float]] | None = None) -> None:
        if not scenes:
            raise ValueError('scenes must list at least one scene (None for the flat ground)')
        if not 0 <= min_distance <= max_distance:
            raise ValueError(f'need 0 <= min_distance <= max_distance; got {min_distance}, {max_distance}')
        # The configs are the extension's, found by type name as a YAML file names them.
        self._task_class = _config_class(TaskCfg, 'PointNavTask')
        self._cube_class = _config_class(ObjectCfg, 'VisualCube')
        if robot_cfg is None:
            robot_cfg = _config_class(RobotCfg, 'JetbotRobot')()
        self.scenes = tuple(scenes)
        self.min_distance, self.max_distance = min_distance, max_distance
        self.max_steps, self.success_distance = max_steps, success_distance
        self.resolution, self.robot_radius = resolution, robot_radius
        self.goal_marker, self.bounds = goal_marker, bounds or {}
        self._metrics = metrics
        self._robot = robot_cfg.model_copy(deep=True)
        self._own_controllers = 'controllers' in self._robot.model_fields_set and self._robot.controllers is not None
        self._templates: dict[str | None, tuple[Any, Any, object]] = {}  # by scene: task, goal marker, family

    def _template(self, scene: str | None) -> tuple[Any, Any, object]:
        """The episode template of ``scene``, its goal marker (or ``None``) and its family (made once)."""
        template = self._templates.get(scene)
        if template is None:
            cube = self._cube_class(name='goal_marker', position=(0.0, 0.0, 0.05), scale=(0.1, 0.1, 0.1),
                                    color=(0.1, 0.8, 0.2, 0.6)) if self.goal_marker else None
            fields = dict(goal=(0.0, 0.0, 0.0), success_distance=self.success_distance, max_steps=self.max_steps,
                          shortest_path_length=0.0, scene_asset_path=scene, robots=[self._robot],
                          objects=[cube] if cube is not None else [])
            if self._metrics is not None:
                fields['metrics'] = [metric.model_copy(deep=True) for metric in self._metrics]
            # (its family: the episodes of one scene share types, files and structure)
            template = self._templates[scene] = (self._task_class(**fields), cube, object())
        return template

    def draw(self, n: int, seed: int) -> FreshEpisodes:
        """``n`` episodes drawn from ``seed`` (the same seed, the same episodes), cycling through the scenes."""
        if n < 0:
            raise ValueError(f'n must be >= 0; got {n}')
        rng = np.random.default_rng(seed)
        robot_template, min_distance, max_distance = self._robot, self.min_distance, self.max_distance
        spaces: dict[str | None, FreeSpace] = {}  # (each scene's looked up once a draw: its file may have changed)
        families: list[object] = []
        episodes: list[TaskCfg] = []
        for e in range(n):
            scene = self.scenes[e % len(self.scenes)]
            space = spaces.get(scene)
            if space is None:
                space = spaces[scene] = _free_space(scene, self.resolution, self.robot_radius, self.bounds.get(scene))
            task_template, cube, family = self._template(scene)
            for _ in range(200):
                start = int(rng.integers(len(space.points)))
                dist, parent = space.geodesic(start)
                candidates = np.flatnonzero((dist >= min_distance) & (dist <= max_distance))
                if len(candidates):
                    break
            else:
                raise ValueError(f'scene {scene!r}: found no start with a reachable goal {min_distance}..{max_distance} m away')
            goal = int(candidates[rng.integers(len(candidates))])
            shortest = path_length(space.path(parent, goal))
            yaw = float(rng.uniform(-math.pi, math.pi))
            sx, sy = (float(v) for v in space.points[start])
            gx, gy = (float(v) for v in space.points[goal])
            pose: dict[str, Any] = {'position': (sx, sy, float(robot_template.position[2])),
                                    'orientation': (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))}
            if self._own_controllers:
                pose['controllers'] = [controller.model_copy() for controller in robot_template.controllers]
            robot = robot_template.model_copy(update=pose)
            objects = [cube.model_copy(update={'position': (gx, gy, 0.05)})] if cube is not None else []
            episode = {'goal': (gx, gy, 0.0), 'shortest_path_length': round(shortest, 6), 'robots': [robot], 'objects': objects}
            if 'metrics' in task_template.model_fields_set:  # (else the class's defaults, shared and never written)
                episode['metrics'] = [metric.model_copy() for metric in task_template.metrics]
            episodes.append(task_template.model_copy(update=episode))
            families.append(family)
        return FreshEpisodes(episodes, families=families)


#: Free-space grids kept between calls (a sampler draws a batch per call, in the same scenes).
_FREE_SPACES_KEPT = 8
_free_spaces: OrderedDict[tuple, FreeSpace] = OrderedDict()


def _free_space(scene: str | None, resolution: float, robot_radius: float, bounds: Sequence[float] | None) -> FreeSpace:
    """``FreeSpace(scene, ...)``, built once per scene file version and arguments."""
    stamp = os.path.getmtime(scene) if scene is not None and os.path.isfile(scene) else None
    key = (scene, stamp, float(resolution), float(robot_radius), None if bounds is None else tuple(float(b) for b in bounds))
    space = _free_spaces.get(key)
    if space is None:
        space = _free_spaces[key] = FreeSpace(scene, resolution, robot_radius, bounds)
        while len(_free_spaces) > _FREE_SPACES_KEPT:
            _free_spaces.popitem(last=False)
    else:
        _free_spaces.move_to_end(key)
    return space


def save_episodes_yaml(path: str | os.PathLike[str], config: Config | Sequence[TaskCfg], **config_fields: Any) -> Config:
    """Write ``config`` (or a ``Config`` of ``config_fields`` around these episodes) as YAML; return it."""
    if not isinstance(config, Config):
        config = Config(task_configs=list(config), **config_fields)
    elif config_fields:
        raise ValueError('config_fields are only used when config is a list of episodes')
    directory = os.path.dirname(os.path.abspath(os.fspath(path)))
    os.makedirs(directory, exist_ok=True)
    config.to_yaml(path)
    return config


def _scene_arg(value: str) -> str | None:
    if value in ('none', 'ground', 'empty'):
        return None
    if os.path.sep not in value and not os.path.exists(value):
        return os.path.join(gm.ASSET_PATH, 'scenes', value)
    return value


def _portable(path: str | None) -> str | None:
    """A scene path as the YAML should name it: the package's own files absolute (``to_yaml`` writes
    them as ``package://`` paths, which work wherever the config is copied), else relative to the
    current folder when below it."""
    if path is None:
        return None
    absolute = os.path.abspath(path)
    if as_package_path(absolute) != absolute:
        return absolute
    relative = os.path.relpath(absolute)
    return relative if not relative.startswith('..') else absolute


def main(argv: Sequence[str] | None = None) -> Config:
    """``python -m internutopia.core.episodes --n 32 --seed 0 --out configs/jetbot_point_nav.yaml``."""
    parser = argparse.ArgumentParser(prog='python -m internutopia.core.episodes',
                                     description='Sample point-goal navigation episodes and write a full Config as YAML.')
    parser.add_argument('--n', type=int, default=32, help='number of episodes (default 32)')
    parser.add_argument('--seed', type=int, default=0, help='sampler seed (default 0)')
    parser.add_argument('--out', required=True, help='YAML file to write')
    parser.add_argument('--scenes', nargs='+', default=['ground', 'two_rooms.usda', 'office.xml'],
                        help="scene files, names under the package's scenes/ folder, or 'ground' (default: ground two_rooms.usda office.xml)")
    parser.add_argument('--env-num', type=int, default=8)
    parser.add_argument('--env-offset-size', type=float, default=10.0)
    parser.add_argument('--metrics-save-path', default=None,
                        help="the config's metrics_save_path (default: results/<name of --out>.jsonl)")
    parser.add_argument('--min-distance', type=float, default=1.0)
    parser.add_argument('--max-distance', type=float, default=4.0)
    parser.add_argument('--max-steps', type=int, default=4000)
    parser.add_argument('--physics-dt', type=float, default=1 / 240)
    args = parser.parse_args(argv)
    if args.metrics_save_path is None:
        stem = os.path.splitext(os.path.basename(args.out))[0]
        args.metrics_save_path = os.path.join('results', f'{stem}.jsonl')
    scenes = [_portable(_scene_arg(s)) for s in args.scenes]
    episodes = generate_point_nav_episodes(args.n, args.seed, scenes=scenes, min_distance=args.min_distance,
                                           max_distance=args.max_distance, max_steps=args.max_steps)
    config = Config(simulator=SimConfig(physics_dt=args.physics_dt, rendering_dt=args.physics_dt), env_num=args.env_num,
                    env_offset_size=args.env_offset_size, metrics_save_path=args.metrics_save_path, task_configs=episodes)
    save_episodes_yaml(args.out, config)
    print(f'wrote {args.n} episodes over {len(scenes)} scenes to {args.out}')
    return config


if __name__ == '__main__':
    main()
