"""The balanced design of a judging round: which items go in which task. Pure.

Each of the k passes is a fresh shuffle of every item, cut into tasks whose sizes differ by at
most one (numpy.array_split's rule), so every item is in exactly k tasks and every task holds
about `items_per_task` items. A judge takes one task per assignment and never a task that shares
an item with one they took before (study.judging.tasks), so each item's k ratings come from k
different judges, and every judge rates the same number of items (within one) per task.
Tasks are handed out pass by pass, so every item has its first rating before any has its second:
a round stopped early leaves the ratings spread evenly rather than some items rated k times and
others never.

Gold items (study.judging.gold) are added to every task round-robin, `gold_per_task` each, at
positions drawn from the same seeded generator, so gold cannot be told from position.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    pass_no: int
    items: tuple[str, ...]  # item ids in the order the judge sees them


def design(
    item_ids: Sequence[str],
    *,
    k: int,
    items_per_task: int,
    gold_ids: Sequence[str] = (),
    gold_per_task: int = 0,
    seed: int = 0,
) -> list[Task]:
    """The tasks of a round, in the order they are handed out."""
    if k < 1 or items_per_task < 1:
        raise ValueError("k and items_per_task must be at least 1")
    items = list(item_ids)
    if not items:
        return []
    rng = random.Random(seed)
    count = math.ceil(len(items) / items_per_task)
    size, extra = divmod(len(items), count)
    gold_per_task = min(gold_per_task, len(gold_ids))
    next_gold = 0
    tasks = []
    for pass_no in range(k):
        order = items[:]
        rng.shuffle(order)
        start = 0
        for number in range(count):
            end = start + size + (1 if number < extra else 0)
            chosen = order[start:end]
            start = end
            for _ in range(gold_per_task):
                gold = gold_ids[next_gold % len(gold_ids)]
                next_gold += 1
                if gold not in chosen:
                    chosen.insert(rng.randrange(len(chosen) + 1), gold)
            tasks.append(Task(pass_no, tuple(chosen)))
    return tasks
