"""The shape every agreement statistic takes: `(item, rater, value)` triples."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable

Rating = tuple[Hashable, Hashable, int]


def by_item(ratings: Iterable[Rating]) -> dict[Hashable, dict[Hashable, int]]:
    """item -> {rater: value}; a rater who rated an item twice keeps the last value."""
    items: dict[Hashable, dict[Hashable, int]] = defaultdict(dict)
    for item, rater, value in ratings:
        items[item][rater] = value
    return dict(items)
