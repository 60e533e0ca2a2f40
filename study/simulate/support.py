"""What `study simulate` can drive, checked before any writer starts (or anything is created).

Writing studies (study.simulate.participant) and chat studies (study.paradigms.chat.simulate) are
driven. The writing path presses Tab for suggestion lists (MindCopilot's L0, CoAuthor's editor); it
has no idle writer for the ghost texts of L1-L3, so a proactive condition's sessions would
not show that condition at all. Those studies are refused with the alternative.
"""

from __future__ import annotations


def refusal(study) -> str | None:
    """One line naming what the simulator cannot drive and what to do instead; None if it can."""
    # tab, or L0 run as the Tab list; L0's assistant panel has no simulated writer either.
    others = [c for c in study.conditions if not study.proactive.tab_list(c.paradigm)]
    proactive = sorted({c.paradigm for c in others})
    if proactive:
        names = ", ".join(c.name for c in others)
        return (f"study simulate presses Tab for suggestion lists (paradigm tab or L0) and cannot drive "
                f"the proactive paradigm {'/'.join(proactive)} of condition(s) {names}; pilot "
                "them by hand with `study demo --paradigm proactive`.")  # fmt: skip
    return None
