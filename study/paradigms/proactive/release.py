"""What `study release build` needs of proactive co-writing beyond its logs (the `release`
hook, study.paradigms.base): nothing is published beside the CoAuthor logs (`conversations`
is empty), but L0 run as the assistant panel (`[proactive] l0 = "assistant"`) asks the model
otherwise than its condition's Tab settings say: one complete response of at most
`assistant_max_tokens`, sent with `system_prompt_l0` in place of the condition's prompt
(study.paradigms.proactive.assistant). `arm_as_run` says so, so that a release's card and
arms.json compare the panel's calls with what study.toml sets for the panel today, not with the
condition's ghost-text length and prompt (which would read as a setting changed mid-study)."""

from __future__ import annotations


def arm_as_run(study, condition) -> dict:
    """The assistant panel's settings for an L0 panel condition; {} for another arm."""
    settings = study.proactive
    if not settings.assistant_panel(condition.paradigm):
        return {}
    return {"mode": "chat", "n": 1, "max_tokens": settings.assistant_max_tokens, "unit": None,
            "system_prompt": settings.system_prompt_l0}  # fmt: skip


def conversations(study, connection, sessions: list[dict]) -> list[dict]:
    """None: the panel keeps no conversation, and its requests are in the session's log."""
    return []
