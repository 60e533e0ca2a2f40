"""The balanced design: every item in exactly k tasks, tasks within one item of each other,
gold in every task, the same seed the same tasks."""

from __future__ import annotations

from collections import Counter

from study.judging.design import design


def test_every_item_is_in_k_tasks_of_even_size():
    items = [f"i{n}" for n in range(103)]
    tasks = design(items, k=3, items_per_task=10, seed=1)
    counts = Counter(item for task in tasks for item in task.items)
    assert set(counts) == set(items) and set(counts.values()) == {3}
    sizes = {len(task.items) for task in tasks}
    assert max(sizes) - min(sizes) <= 1 and max(sizes) <= 10
    # No task holds an item twice, and passes come in order (first ratings before second ones).
    assert all(len(set(task.items)) == len(task.items) for task in tasks)
    assert [task.pass_no for task in tasks] == sorted(task.pass_no for task in tasks)


def test_gold_goes_into_every_task_round_robin():
    tasks = design([f"i{n}" for n in range(40)], k=2, items_per_task=10, gold_ids=["g1", "g2", "g3"],
                   gold_per_task=1, seed=5)  # fmt: skip
    assert all(sum(item.startswith("g") for item in task.items) == 1 for task in tasks)
    used = Counter(item for task in tasks for item in task.items if item.startswith("g"))
    assert max(used.values()) - min(used.values()) <= 1


def test_the_same_seed_gives_the_same_tasks_and_another_seed_others():
    items = [f"i{n}" for n in range(30)]
    assert design(items, k=2, items_per_task=7, seed=3) == design(items, k=2, items_per_task=7, seed=3)
    assert design(items, k=2, items_per_task=7, seed=3) != design(items, k=2, items_per_task=7, seed=4)
