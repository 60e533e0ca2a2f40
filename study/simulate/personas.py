"""Who the simulated writers are: a persona (how they behave), an intent (what they want to
write), and the habits the seeded policy falls back on when the model's answer cannot be read.

After CollabLLM's user simulator (spec B4.2): stay in character as a human with a consistent
personality, minimise effort, occasionally make mistakes (typos), stay goal-oriented.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Persona:
    description: str
    query_rate: float = 0.4  # chance of pressing Tab at a turn
    accept_rate: float = 0.7  # chance of accepting one of the suggestions shown
    typo_rate: float = 0.01  # chance per character of a wrong key, then a backspace
    target_words: int = 120  # the length at which the writer considers the text done
    # Of the ghost texts a writer takes (MindCopilot L1-L3, study.paradigms.proactive.simulate):
    # the chance of taking only the first word, and of editing the end of what was taken.
    partial_rate: float = 0.15
    modify_rate: float = 0.15
    # Of the responses a writer takes from L0's assistant panel when it has "Insert at cursor"
    # (study.paradigms.proactive.assistant_simulate): the chance of pressing it (all of the
    # response, where the caret is) rather than copying a sentence or two.
    insert_rate: float = 0.5


BUILT_IN = (
    Persona("a careful native English speaker who prefers their own words and asks the AI "
            "mostly when stuck", query_rate=0.2, accept_rate=0.5, typo_rate=0.005, partial_rate=0.3,
            modify_rate=0.4, insert_rate=0.2),
    Persona("a hurried crowd worker who wants to finish quickly and accepts most suggestions",
            query_rate=0.7, accept_rate=0.9, typo_rate=0.02, target_words=90, partial_rate=0.05,
            modify_rate=0.05, insert_rate=0.8),
    Persona("a non-native English speaker who writes short sentences, makes small spelling "
            "mistakes and uses the AI for ideas", query_rate=0.5, accept_rate=0.7, typo_rate=0.03),
)  # fmt: skip

DEFAULT_INTENT = (
    "write a coherent {noun} on the prompt that the writer would be glad to submit, with the AI's "
    "help where it is useful"
)
