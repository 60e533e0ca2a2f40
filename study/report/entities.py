"""New named entities in accepted suggestions, and their reuse (CoAuthor section 5.1.2, Fig. 7).

The paper: "we identified GPT-3-generated sentences with new named entities ... that did not
appear in their previous contexts. Then, we checked whether they were reused by writers in
subsequent writing", with Stanza for the entities and exact match for reuse. Here, for each
accepted suggestion (a `text-insert` from the api after a `suggestion-select`), an entity is
new when its text does not occur in the document just before the insertion, and reused when it
occurs in text the writer typed later in the session.

A named-entity model is needed. The toolkit downloads none: `load_model` uses an installed
spaCy English pipeline that has an `ner` component, and otherwise says why there is none, so
the report can print that instead of a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from study.curation.replay import replay
from study.curation.suggestions import inserted_text


@dataclass(frozen=True)
class EntityModel:
    nlp: object | None
    name: str
    why_not: str = ""


def load_model() -> EntityModel:
    try:
        import spacy
        import spacy.util
    except ImportError:
        return EntityModel(None, "", "spaCy is not installed")
    for name in sorted(spacy.util.get_installed_models()):
        if not name.startswith("en_"):
            continue
        try:
            nlp = spacy.load(name)
        except (OSError, ValueError):
            continue
        if "ner" in nlp.pipe_names:
            return EntityModel(nlp, name)
    return EntityModel(
        None, "",
        "no spaCy English pipeline with a named-entity recognizer is installed, and none can be "
        "downloaded here (the paper used Stanza). Install one from a local wheel, e.g. "
        "en_core_web_sm, and run the report again.",
    )  # fmt: skip


@dataclass(frozen=True)
class SessionEntities:
    accepted: int  # accepted suggestions
    with_new: int  # accepted suggestions with at least one new entity
    new: int  # new entities proposed
    reused: int  # of those, reused later by the writer


def session_entities(events: Sequence[Mapping], nlp) -> SessionEntities:
    accepted = with_new = new = reused = 0
    selected = False
    proposals: list[tuple[int, set[str]]] = []
    for index, event in enumerate(events):
        name, source = event.get("eventName"), event.get("eventSource")
        if name == "suggestion-select":
            selected = True
        elif name == "text-insert" and source == "api" and selected:
            selected = False
            accepted += 1
            context = replay(events, at=index - 1).text if index else ""
            found = {e.text for e in nlp(inserted_text(event)).ents if e.text not in context}
            if found:
                with_new += 1
                new += len(found)
                proposals.append((index, found))
    for index, found in proposals:
        later = "".join(
            inserted_text(e) for e in events[index + 1 :]
            if e.get("eventName") == "text-insert" and e.get("eventSource") == "user"
        )  # fmt: skip
        reused += sum(1 for entity in found if entity in later)
    return SessionEntities(accepted, with_new, new, reused)
