"""No assistant: the control arm (`paradigm = "none"` in a condition). The writer has the same
consent, instructions, editor, timer, log, surveys and completion as in every other paradigm,
and nothing of the assistant: no pages or API of its own, and the other paradigms' APIs refuse
its sessions.

What makes a session a control session, how study.toml declares one, and how exports and
reports read its suggestion figures ("not applicable"): study.control_arm.
"""

from study.paradigms.base import Paradigm

PARADIGM = Paradigm(
    name="none",
    summary="the writer writes on their own, with no assistant (a control arm)",
    conditions=("none",),
)
