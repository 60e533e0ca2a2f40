"""The self-evaluation page's questions: the writer confirms the paper's two requirements
before the final survey (CoAuthor §4.3.2, App. E). Shown by study.server.participant, and
beside a submission in the review workspace (study.review.presentation)."""

from __future__ import annotations


def evaluation_items(noun: str, assistant: bool = True) -> list[tuple[str, str]]:
    """The paper's two requirements (§4.3.2, App. E), as required checkboxes; a control arm's
    writer (`assistant` False, study.control_arm) had no AI to collaborate with and is asked
    only the first."""
    ending = (
        "My essay has a clear stance and conclusion."
        if noun == "essay"
        else f"My {noun} has a clear ending."
    )
    items = [("clear_ending", ending)]
    if assistant:
        items.append(("collaborated", f"I collaboratively wrote my {noun} with AI."))
    return items
