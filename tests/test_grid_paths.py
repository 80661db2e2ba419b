"""The point-nav sampler's grid geodesics (``internutopia.core.grid_paths``): the compiled Dijkstra,
its Python fallback and a plain dict-of-cells Dijkstra give the same distances and parents."""

from __future__ import annotations

import heapq
import math

import numpy as np

from internutopia.core.grid_paths import NEIGHBOURS, dijkstra, grid_adjacency
from internutopia.core.util import jit


def _reference(cells: np.ndarray, resolution: float, start: int) -> tuple[np.ndarray, np.ndarray]:
    """Dijkstra over a dict of cells, neighbours looked up as it goes (the sampler's former code)."""
    index = {tuple(c): k for k, c in enumerate(cells.tolist())}
    dist = np.full(len(cells), np.inf)
    parent = np.full(len(cells), -1, dtype=np.intp)
    dist[start] = 0.0
    heap = [(0.0, start)]
    while heap:
        d, k = heapq.heappop(heap)
        if d > dist[k]:
            continue
        x, y = cells[k]
        for dx, dy, step in NEIGHBOURS:
            j = index.get((x + dx, y + dy))
            if j is None or (dx and dy and ((x + dx, y) not in index or (x, y + dy) not in index)):
                continue
            nd = d + step * resolution
            if nd < dist[j] - 1e-12:
                dist[j], parent[j] = nd, k
                heapq.heappush(heap, (nd, j))
    return dist, parent


def test_compiled_fallback_and_reference_agree_bit_for_bit_on_grids_with_walls_and_islands() -> None:
    rng = np.random.default_rng(3)
    grid = rng.random((23, 17)) > 0.3  # free cells, with walls, pockets and unreachable islands
    cells = np.argwhere(grid) - [5, 2]  # (negative coordinates too)
    rng.shuffle(cells)  # (ids in no grid order)
    adjacency = grid_adjacency(cells, 0.25)
    for start in rng.choice(len(cells), 6, replace=False):
        want = _reference(cells, 0.25, int(start))
        got = dijkstra(adjacency, int(start))
        with jit.numpy_only():
            fallback = dijkstra(adjacency, int(start))
        for dist, parent in (got, fallback):
            assert dist.dtype == np.float64 and parent.dtype == np.intp
            np.testing.assert_array_equal(dist, want[0])
            np.testing.assert_array_equal(parent, want[1])
        assert np.isinf(want[0]).any() and (want[0] > 3 * math.sqrt(2)).any()  # (islands and long paths were there)


def test_a_diagonal_needs_both_cells_beside_it_free() -> None:
    square = np.array([[0, 0], [1, 0], [0, 1], [1, 1]])
    adjacency = grid_adjacency(square, 1.0)
    assert adjacency.indices[adjacency.indptr[0]:adjacency.indptr[1]].tolist() == [2, 1, 3]  # (NEIGHBOURS order)
    assert adjacency.weights[adjacency.indptr[0]:adjacency.indptr[1]].tolist() == [1.0, 1.0, math.sqrt(2)]
    corner = grid_adjacency(square[[0, 1, 3]], 1.0)  # (0, 1) taken away: no diagonal from (0, 0) to (1, 1)
    assert corner.indices[corner.indptr[0]:corner.indptr[1]].tolist() == [1]
    assert grid_adjacency(square[[0, 3]], 1.0).indptr.tolist() == [0, 0, 0]
    assert grid_adjacency(np.zeros((0, 2), dtype=int), 1.0).indptr.tolist() == [0]
