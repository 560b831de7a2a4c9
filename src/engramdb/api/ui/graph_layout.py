"""Where the graph page draws each node: a radial tree per connected part, the parts packed in rows.

Pure and linear in the nodes and edges (no force simulation): each part is laid out around its
best-connected node, its neighbours on the first ring, theirs on the next, each subtree given a
share of the circle as large as its leaves; a ring grows with the nodes it holds, so they keep
their spacing. The same graph always gets the same drawing.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass

RING = 70.0  # the distance between two rings of a tree
SPACING = 26.0  # the least arc between two nodes of a ring
MARGIN = 40.0  # around each part


@dataclass(frozen=True)
class Node:
    """A record or a memory, as the graph draws it."""

    id: str
    kind: str  # RECORD, EPISODE or MEMORY_FACT
    label: str  # the record's label, or EPISODE / FACT
    name: str


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    type: str


@dataclass(frozen=True)
class Placed:
    """A node at its place, with how many links it has (the drawing sizes it by them)."""

    node: Node
    x: float
    y: float
    degree: int


@dataclass(frozen=True)
class Drawing:
    nodes: list[Placed]
    edges: list[tuple[Placed, Placed, str]]
    box: tuple[float, float, float, float]  # x, y, width, height: the viewBox that fits it all


def layout(nodes: Sequence[Node], edges: Sequence[Edge]) -> Drawing:
    """Place every node; edges between unknown nodes are left out."""
    known = {n.id: n for n in nodes}
    links = [e for e in edges if e.source in known and e.target in known and e.source != e.target]
    around: dict[str, list[str]] = defaultdict(list)
    for e in links:
        around[e.source].append(e.target)
        around[e.target].append(e.source)
    by_degree = sorted(known, key=lambda i: (-len(around[i]), i))
    seen: set[str] = set()
    parts = []
    for root in by_degree:
        if root not in seen:
            parts.append(_radial(root, around, seen))
    spots = _pack(parts)
    placed = {i: Placed(known[i], round(x, 1), round(y, 1), len(around[i])) for i, (x, y) in spots.items()}
    drawn = [(placed[e.source], placed[e.target], e.type) for e in links]
    return Drawing(list(placed.values()), drawn, _box(list(placed.values())))


def _radial(root: str, around: dict[str, list[str]], seen: set[str]) -> tuple[float, dict[str, tuple[float, float]]]:
    """One part around ``root``: its radius and each node's place relative to its centre."""
    order, children, depth = [root], defaultdict(list), {root: 0}
    seen.add(root)
    queue = deque([root])
    while queue:
        here = queue.popleft()
        for there in sorted(set(around[here])):
            if there not in seen:
                seen.add(there)
                depth[there] = depth[here] + 1
                children[here].append(there)
                order.append(there)
                queue.append(there)
    leaves: dict[str, int] = {}
    for here in reversed(order):
        leaves[here] = sum(leaves[c] for c in children[here]) or 1
    per_ring: dict[int, int] = defaultdict(int)
    for d in depth.values():
        per_ring[d] += 1
    radius = {0: 0.0}
    for d in range(1, max(depth.values()) + 1):
        radius[d] = max(radius[d - 1] + RING, per_ring[d] * SPACING / (2 * math.pi))
    spots = {root: (0.0, 0.0)}
    sectors = {root: (0.0, 2 * math.pi)}
    for here in order:
        start, width = sectors[here]
        for child in children[here]:
            share = width * leaves[child] / leaves[here]
            sectors[child] = (start, share)
            middle = start + share / 2
            spots[child] = (radius[depth[child]] * math.cos(middle), radius[depth[child]] * math.sin(middle))
            start += share
    return radius[max(depth.values())] + MARGIN, spots


def _pack(parts: list[tuple[float, dict[str, tuple[float, float]]]]) -> dict[str, tuple[float, float]]:
    """Parts in rows, largest first, each row as wide as the square that would hold them all."""
    width = math.sqrt(sum((2 * r) ** 2 for r, _ in parts)) * 1.2
    x = y = row_height = 0.0
    placed: dict[str, tuple[float, float]] = {}
    for r, spots in parts:
        if x > 0 and x + 2 * r > width:
            x, y, row_height = 0.0, y + row_height, 0.0
        cx, cy = x + r, y + r
        placed.update({i: (cx + dx, cy + dy) for i, (dx, dy) in spots.items()})
        x, row_height = x + 2 * r, max(row_height, 2 * r)
    return placed


def _box(nodes: list[Placed]) -> tuple[float, float, float, float]:
    if not nodes:
        return (0.0, 0.0, 100.0, 100.0)
    xs, ys = [n.x for n in nodes], [n.y for n in nodes]
    left, top = min(xs) - MARGIN, min(ys) - MARGIN
    return (round(left, 1), round(top, 1), round(max(xs) - left + MARGIN, 1), round(max(ys) - top + MARGIN, 1))
