"""Shortest paths on an 8-connected grid of free cells (the point-nav episode sampler's geodesics).

:func:`grid_adjacency` lists each cell's neighbours once (no corner cutting: a diagonal move needs
both cells beside it free), in a fixed order, and :func:`dijkstra` runs over that list. The
sampler calls Dijkstra once per episode, inside the vector env's step when an episode ends, so it
has a compiled twin (:class:`~internutopia.core.util.jit.Kernel`); both pop the heap in the same
``(distance, cell)`` order and relax the neighbours in the same order, so distances and parents
are the same bit for bit.

>>> import numpy as np
>>> cells = np.array([[0, 0], [1, 0], [2, 0], [1, 1]])
>>> adjacency = grid_adjacency(cells, 0.5)
>>> dist, parent = dijkstra(adjacency, 0)
>>> dist.tolist(), parent.tolist()
([0.0, 0.5, 1.0, 1.0], [-1, 0, 1, 1])
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from internutopia.core.util.jit import Kernel

__all__ = ['GridAdjacency', 'dijkstra', 'grid_adjacency']

#: Neighbour offsets and step lengths (in cells), in the order the relaxation visits them.
NEIGHBOURS = [(dx, dy, math.hypot(dx, dy)) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]


class GridAdjacency:
    """Each cell's neighbours in CSR form: ``indices[indptr[k]:indptr[k + 1]]`` with step lengths
    ``weights`` (metres)."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray) -> None:
        self.indptr, self.indices, self.weights = indptr, indices, weights

    def __len__(self) -> int:
        return len(self.indptr) - 1


def grid_adjacency(cells: np.ndarray, resolution: float) -> GridAdjacency:
    """The moves between ``cells`` (``(n, 2)`` integer grid coordinates, distinct) of an 8-connected
    grid of cell size ``resolution``, without corner cutting; each cell's in :data:`NEIGHBOURS` order."""
    cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
    n = len(cells)
    if n == 0:
        return GridAdjacency(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    # Cell ids on a grid with a border of -1 (no cell), so every neighbour lookup is in bounds.
    at = cells - cells.min(axis=0) + 1
    grid = np.full(tuple(at.max(axis=0) + 2), -1, dtype=np.int64)
    grid[at[:, 0], at[:, 1]] = np.arange(n)
    x, y = at[:, 0], at[:, 1]
    neighbour = np.empty((n, len(NEIGHBOURS)), dtype=np.int64)
    allowed = np.empty((n, len(NEIGHBOURS)), dtype=bool)
    for column, (dx, dy, _) in enumerate(NEIGHBOURS):
        neighbour[:, column] = grid[x + dx, y + dy]
        allowed[:, column] = neighbour[:, column] >= 0
        if dx and dy:  # a diagonal move needs both cells beside it free
            allowed[:, column] &= (grid[x + dx, y] >= 0) & (grid[x, y + dy] >= 0)
    lengths = np.array([step for _, _, step in NEIGHBOURS]) * resolution
    indptr = np.concatenate([[0], np.cumsum(allowed.sum(axis=1))]).astype(np.int64)
    weights = np.broadcast_to(lengths, allowed.shape)[allowed]
    return GridAdjacency(indptr, neighbour[allowed], np.ascontiguousarray(weights, dtype=np.float64))


def _dijkstra_rows(indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray, start: int,
                   dist: np.ndarray, parent: np.ndarray) -> None:
    """Dijkstra from ``start`` into ``dist`` (inf-filled) and ``parent`` (-1-filled); the compiled
    kernel's source, and the reference with lists (numpy scalars are slow in a Python loop)."""
    dist[start] = 0.0
    heap = [(0.0, start)]
    while heap:
        d, k = heapq.heappop(heap)
        if d > dist[k]:
            continue
        for at in range(indptr[k], indptr[k + 1]):
            j = indices[at]
            nd = d + weights[at]
            if nd < dist[j] - 1e-12:
                dist[j] = nd
                parent[j] = k
                heapq.heappush(heap, (nd, j))


_dijkstra_kernel = Kernel(_dijkstra_rows)


def dijkstra(adjacency: GridAdjacency, start: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances (m) from cell ``start`` to every cell (``inf`` where unreachable) and each cell's
    parent on a shortest path (``-1`` for ``start`` and unreachable cells)."""
    n = len(adjacency)
    if _dijkstra_kernel.available:
        dist = np.full(n, np.inf)
        parent = np.full(n, -1, dtype=np.int64)
        _dijkstra_kernel(adjacency.indptr, adjacency.indices, adjacency.weights, np.int64(start), dist, parent)
        return dist, parent.astype(np.intp)
    dist_list, parent_list = [math.inf] * n, [-1] * n
    _dijkstra_rows(adjacency.indptr.tolist(), adjacency.indices.tolist(), adjacency.weights.tolist(), int(start),
                   dist_list, parent_list)  # type: ignore[arg-type]
    return np.asarray(dist_list), np.asarray(parent_list, dtype=np.intp)
