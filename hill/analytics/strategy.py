"""The strategy map: programs grouped by how they play (docs/analytics.md).

Each program is a vector of features from its profile (hill.analytics.
profile.features: heat maps, decoy layouts and duel lengths, each block
normalised); programs are clustered hierarchically with average linkage on
cosine distance (scipy.cluster.hierarchy.linkage), and the dendrogram's
leaf order (scipy's `dendrogram`) orders the matrices beside it, so that
programs that play alike sit together and their results show as blocks.
Families are the dendrogram's coloured subtrees (scipy colours the
subtrees below its colour threshold): of the heights at which the tree can
be cut, the one that puts the most programs in families of two or more,
with at most MAX_FAMILIES families and none holding more than half the
programs (a cut that leaves one family of nearly everyone says nothing);
a program alone below the cut is in no family (0).  Fewer than 4 programs
make no families.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

import numpy as np
from scipy.cluster import hierarchy
from scipy.spatial.distance import pdist, squareform

METHOD: Final = "average"
METRIC: Final = "cosine"
MAX_FAMILIES = 9


def _families(tree: np.ndarray, n: int) -> float:
    """The colour threshold that makes the families (see the module); 0: none."""
    best, chosen = 0, 0.0
    if n < 4:
        return chosen
    for height in sorted(set(tree[:, 2].tolist()), reverse=True):
        threshold = height + 1e-9  # the merges at this height join their families
        colours = hierarchy.dendrogram(
            tree, no_plot=True, color_threshold=threshold, above_threshold_color="C0"
        )["leaves_color_list"]
        sizes = Counter(c for c in colours if c != "C0").values()
        grouped = sum(sizes)
        if len(sizes) <= MAX_FAMILIES and max(sizes, default=0) <= n / 2 and grouped > best:
            best, chosen = grouped, threshold
    return chosen


@dataclass(frozen=True)
class StrategyMap:
    """The clustering of n programs (given in some order: their indexes)."""

    order: list[int]  # the dendrogram's leaf order: indexes of the programs
    linkage: np.ndarray  # (n - 1, 4) scipy's linkage, over the positions in `order`
    families: list[int]  # each program's family (by index): 1, 2 ...; 0: none
    distances: np.ndarray  # (n, n) cosine distances between the programs
    # the dendrogram's drawing as scipy lays it out: per link, its four
    # x positions (leaf j at 10 j + 5) and heights, and its family (0: above them)
    icoord: list[list[float]]
    dcoord: list[list[float]]
    link_families: list[int]

    def alike(self, index: int, count: int) -> list[tuple[int, float]]:
        """The (at most `count`) programs that play most like program
        `index`, nearest first: (index, cosine distance)."""
        near = sorted((float(d), j) for j, d in enumerate(self.distances[index]) if j != index)
        return [(j, d) for d, j in near[:count]]


def _family(colour: str) -> int:
    """scipy's colour names "C1", "C2" ... as family numbers (0: "C0", none)."""
    number = int(colour[1:]) if colour[1:].isdigit() else 0
    return 0 if colour == "C0" else number


def strategy_map(features: np.ndarray) -> StrategyMap:
    """Cluster the programs whose features are the rows of `features`."""
    n = len(features)
    if n < 2:
        return StrategyMap(list(range(n)), np.zeros((0, 4)), [0] * n, np.zeros((n, n)), [], [], [])
    distances = pdist(features, metric=METRIC)
    distances = np.clip(np.nan_to_num(distances, nan=1.0), 0.0, 2.0)
    tree = hierarchy.linkage(distances, method=METHOD)
    threshold = _families(tree, n)
    drawn = hierarchy.dendrogram(
        tree, no_plot=True, color_threshold=threshold, above_threshold_color="C0"
    )
    leaves = drawn["leaves"]
    assert leaves is not None  # always drawn: `no_plot` draws no figure only
    order = [int(i) for i in leaves]
    position = {leaf: place for place, leaf in enumerate(order)}
    linkage = tree.copy()
    for column in (0, 1):
        linkage[:, column] = [position.get(int(v), int(v)) for v in tree[:, column]]
    families = [0] * n
    for leaf, colour in zip(order, drawn["leaves_color_list"], strict=True):
        families[leaf] = _family(colour)
    return StrategyMap(
        order=order,
        linkage=linkage,
        families=families,
        distances=squareform(distances),
        icoord=[[float(x) for x in xs] for xs in drawn["icoord"]],
        dcoord=[[float(y) for y in ys] for ys in drawn["dcoord"]],
        link_families=[_family(c) for c in drawn["color_list"]],
    )
