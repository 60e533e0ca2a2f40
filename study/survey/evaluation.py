"""The self-evaluation page's questions: the writer confirms the paper's two requirements
before the final survey (CoAuthor §4.3.2, App. E). Shown by study.server.participant, and
beside a submission in the review workspace (study.review.presentation)."""

from __future__ import annotations


def evaluation_items(noun: str) -> list[tuple[str, str]]:
    """The paper's two requirements (§4.3.2, App. E), as required checkboxes."""
    ending = (
        "My essay has a clear stance and conclusion."
        if noun == "essay"
        else f"My {noun} has a clear ending."
    )
    return [("clear_ending", ending), ("collaborated", f"I collaboratively wrote my {noun} with AI.")]
