"""A planned comparison's estimate: each arm's mean with its interval, and the difference.

The difference of means (treatment minus control) with a 95% percentile-bootstrap interval;
seeded, so the same data gives the same interval. How the two arms are compared is the
design's (`pairing`), not the data's, so a preregistered analysis cannot change with how many
stopped part-way. Between subjects (`[design] assignment = "between"`) the two arms' sessions
are resampled independently (sessions are the unit, as in study.report.intervals; no interval
with fewer than three sessions in an arm), even where a writer came back. Within subjects
(`"within"`) each writer is the unit: the difference is the mean of each writer's own
difference (of their mean per arm) over the writers with a value in both arms, writers
resampled (no interval with fewer than three), so a writer's own level cancels out, as the
report's "Arms compared" takes it; an analysis of independent groups there would misstate the
preregistered test's interval. With the design unknown (a folder of sessions, a release without
within.json) it is inferred: paired when most of the two arms' writers wrote in both. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

RESAMPLES = 2000
# CHI 2022, CoAuthor's venue: any fixed number would do. The report's intervals take the same
# (study.report.intervals), and every bootstrap here and there resamples its values sorted, so
# the interval depends on the values alone, not on the order sessions or writers were listed
# in: the same comparison in "Planned comparisons", "Arms compared" and "Within-subjects
# design" then has one interval, not three that differ by the resampling's noise.
SEED = 20220429
MIN_SESSIONS = 3


@dataclass(frozen=True)
class Difference:
    n_treatment: int
    n_control: int
    treatment: float
    control: float
    difference: float
    low: float
    high: float
    participants: int = 0  # paired: the writers in both arms
    paired: bool = False  # False: two independent groups of sessions
    one_arm_only: int = 0  # paired: writers left out for a value in one of the two arms only
    inferred: bool = False  # the design not known: taken as `pairing` infers it


def difference(treatment: Sequence[float], control: Sequence[float], *, seed: int = SEED) -> Difference:
    t = np.sort(np.asarray([v for v in treatment if v is not None and not math.isnan(v)], dtype=float))
    c = np.sort(np.asarray([v for v in control if v is not None and not math.isnan(v)], dtype=float))
    if t.size == 0 or c.size == 0:
        return Difference(int(t.size), int(c.size), math.nan, math.nan, math.nan, math.nan, math.nan)
    mean_t, mean_c = float(t.mean()), float(c.mean())
    low = high = math.nan
    if t.size >= MIN_SESSIONS and c.size >= MIN_SESSIONS:
        rng = np.random.default_rng(seed)
        boot_t = t[rng.integers(0, t.size, size=(RESAMPLES, t.size))].mean(axis=1)
        boot_c = c[rng.integers(0, c.size, size=(RESAMPLES, c.size))].mean(axis=1)
        low, high = (float(x) for x in np.percentile(boot_t - boot_c, [2.5, 97.5]))
    return Difference(int(t.size), int(c.size), mean_t, mean_c, mean_t - mean_c, low, high)


def writer_means(values: Mapping[str, float | None], sessions: Iterable[str],
                 writer_of: Callable[[str], str]) -> dict[str, float]:
    """Each named writer's mean over their `sessions` that have a value (not None, not NaN)."""
    found: dict[str, list[float]] = {}
    for session_id in sessions:
        value, writer = values.get(session_id), writer_of(session_id)
        if writer and _finite(value):
            found.setdefault(writer, []).append(float(value))
    return {writer: float(np.mean(numbers)) for writer, numbers in found.items()}


WITHIN, BETWEEN = "within", "between"  # [design] assignment (study.config)


@dataclass(frozen=True)
class Pairing:
    """How two arms are compared: `writers` to pair them by, or None for two independent groups
    of sessions."""

    writers: list[str] | None
    one_arm_only: int = 0  # paired: writers with a value in one of the two arms only, left out
    inferred: bool = False  # the design unknown: decided from how many writers wrote in both


def pairing(treatment: Mapping[str, float], control: Mapping[str, float], design: str | None) -> Pairing:
    """The one rule for how two arms are compared, given each arm's `writer_means` and the
    study's `design` ([design] assignment, None when not known). Within subjects, always paired
    by the writers with a value in both arms, however many stopped part-way: a preregistered
    analysis must not turn into another with the dropout. Between subjects, always independent:
    a writer or two who came back would otherwise be compared alone. Not known, inferred:
    paired when most of the two arms' writers wrote in both. The report's "Arms compared"
    (study.report.sections.arms) and a planned comparison take this rule."""
    shared = sorted(treatment.keys() & control.keys())
    one_arm_only = len(treatment.keys() | control.keys()) - len(shared)
    if design == WITHIN:
        return Pairing(shared, one_arm_only)
    if design == BETWEEN:
        return Pairing(None)
    if shared and 2 * len(shared) > len(shared) + one_arm_only:
        return Pairing(shared, one_arm_only, inferred=True)
    return Pairing(None, inferred=True)


def estimate(values: Mapping[str, float | None], arm_of: Mapping[str, str], writer_of: Mapping[str, str],
             treatment: str, control: str, *, design: str | None = None, seed: int = SEED) -> Difference:
    """The comparison of `treatment` with `control` over sessions' `values`, as the `design`
    ([design] assignment; None: not known) says to take it (`pairing`): paired by writer, or of
    two independent groups of sessions."""
    sides = {side: {s: v for s, v in values.items() if arm_of.get(s) == side and _finite(v)}
             for side in (treatment, control)}  # fmt: skip
    by_writer = {side: writer_means(values, sides[side], lambda s: writer_of.get(s, "")) for side in sides}
    taken = pairing(by_writer[treatment], by_writer[control], design)
    if taken.writers is None:
        found = difference(list(sides[treatment].values()), list(sides[control].values()), seed=seed)
        return replace(found, inferred=taken.inferred)
    paired = {"paired": True, "participants": len(taken.writers), "one_arm_only": taken.one_arm_only,
              "inferred": taken.inferred}  # fmt: skip
    if not taken.writers:  # within subjects, nobody has a value in both arms yet
        return Difference(len(sides[treatment]), len(sides[control]), math.nan, math.nan, math.nan,
                          math.nan, math.nan, **paired)  # fmt: skip
    t = np.asarray([by_writer[treatment][w] for w in taken.writers], dtype=float)
    c = np.asarray([by_writer[control][w] for w in taken.writers], dtype=float)
    differences = np.sort(t - c)
    low = high = math.nan
    if differences.size >= MIN_SESSIONS:
        rng = np.random.default_rng(seed)
        boot = differences[rng.integers(0, differences.size, size=(RESAMPLES, differences.size))].mean(axis=1)
        low, high = (float(x) for x in np.percentile(boot, [2.5, 97.5]))
    return Difference(len(sides[treatment]), len(sides[control]), float(t.mean()), float(c.mean()),
                      float(differences.mean()), low, high, **paired)  # fmt: skip


def _finite(value) -> bool:
    return value is not None and not math.isnan(value)
