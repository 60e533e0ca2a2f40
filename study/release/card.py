"""The dataset card (README.md): a Hugging Face YAML header, then the questions of
"Datasheets for Datasets" (Gebru et al., CACM 2021), answered from what the toolkit knows. The
Composition section, with the table of the study's arms, is study.release.card_composition's.

Where the toolkit cannot know an answer (who funded the work, a contact address), the card says
so in an italic note for the curator. The curator answers the first before the build
(study.release.creators: `[release]` in study.toml, or `--creator` and `--funding`), the
second with `[study] contact` (study.release.contact).
"""

from __future__ import annotations

import json

from study.config_texts import minutes_text
from study.release import card_composition, chat_card, creators, versioning, within_card
from study.release.facts import ReleaseFacts
from study.release.layout import CHANGELOG, CONVERSATIONS, DATAPACKAGE, METADATA_CSV, STATS_CSV, SUMS, SURVEY_CSV
from study.release.markdown import table
from study.release.pii import ENTITIES, MIN_KNOWN_ID_LENGTH

CURATOR = "_Not known to the toolkit: the curator fills this in before publishing._"
PAPER = (
    "Lee, Liang & Yang, CoAuthor: Designing a Human-AI Collaborative Writing Dataset for "
    "Exploring Language Model Capabilities, CHI 2022"
)
TAB_LIST = (
    "suggestions on Tab (CoAuthor): pressing Tab asks the model for suggestions, which appear in "
    "a list the writer may accept, navigate or dismiss."
)
SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


def _q(text: str) -> str:
    # YAML accepts JSON's double-quoted strings, so json.dumps quotes any text safely.
    return json.dumps(text, ensure_ascii=False)


def _size_category(n: int) -> str:
    return next((label for limit, label in SIZES if n < limit), "n>1M")


def tags(facts: ReleaseFacts) -> list[str]:
    """The card's tags and datapackage.json's keywords: a chat study has no keystroke logs."""
    return ["human-ai-collaboration", "writing"] + (["keystroke-logs", "coauthor"] if facts.sessions else
                                                    ["chat", "conversations"])  # fmt: skip


def yaml_header(facts: ReleaseFacts) -> str:
    lines = [
        "---",
        f"pretty_name: {_q(facts.title)}",
        f"license: {_q(facts.license)}",
        "language:", "- en",
        "task_categories:", "- text-generation",
        "tags:", *(f"- {tag}" for tag in tags(facts)),
        "size_categories:", f"- {_q(_size_category(facts.sessions))}",
        "configs:",
    ]  # fmt: skip
    if facts.sessions:
        lines += ["- config_name: metadata", f"  data_files: {METADATA_CSV}", "  default: true",
                  "- config_name: stats", f"  data_files: {STATS_CSV}"]  # fmt: skip
    if facts.conversations:
        lines += ["- config_name: conversations", f"  data_files: {CONVERSATIONS}"]
        lines += [] if facts.sessions else ["  default: true"]
    if facts.survey_sessions:
        lines += ["- config_name: survey", f"  data_files: {SURVEY_CSV}"]
    lines.append("---")
    return "\n".join(lines) + "\n"


def render(facts: ReleaseFacts) -> str:
    what = (
        f"Keystroke-level logs of people writing with AI suggestions, in the CoAuthor format ({PAPER})"
        if facts.sessions else chat_card.WHAT
    )  # fmt: skip
    intro = f"{what}. Version {facts.version}, {facts.date}. Built by the `study` toolkit (`study release build`).\n"
    sections = (_motivation, card_composition.composition, _collection, _preprocessing, _uses, _distribution,
                _maintenance)  # fmt: skip
    parts = [yaml_header(facts), f"# {facts.title}\n", intro]
    return "\n".join(parts + [section(facts) for section in sections])


def _motivation(facts: ReleaseFacts) -> str:
    # A study whose arms are not all CoAuthor's Tab list (a control arm, ghost text, a chat
    # panel) was not about next-sentence suggestions on request: its card says it compares arms.
    other_arms = facts.study is not None and any(c.get("arm") for c in facts.study.conditions)
    purpose = (
        chat_card.PURPOSE if not facts.sessions else
        "To compare how people write in the study's arms (what each arm's writers had beside the "
        "editor is under Collection process), with CoAuthor's logs: every keystroke, cursor move "
        "and suggestion is logged, so the whole writing process can be replayed."
        if other_arms else
        "To study how writers collaborate with a language model that suggests the next sentence "
        "on request, following the CoAuthor design: every keystroke, cursor move and suggestion "
        "is logged, so the whole writing process can be replayed."
    )  # fmt: skip
    return (
        "## Motivation\n\n"
        f"**For what purpose was the dataset created?** {purpose}\n\n"
        f"**Who created it, and who funded it?** {creators.answer(facts.creators) or CURATOR}\n"
    )


def _collection(facts: ReleaseFacts) -> str:
    study = facts.study
    arms = [c for c in study.conditions if c.get("arm")] if study else []
    if not facts.sessions:
        how = chat_card.COLLECTION
    elif not study:
        # A folder of session files (the CoAuthor release as distributed, 2021) says nothing of the
        # editor that recorded it: its writers need not have used this toolkit's.
        how = (
            "The logs are in CoAuthor's format: the prompt is the initial text; pressing Tab asks "
            "the model for suggestions, which appear in a list the writer may accept, navigate or "
            "dismiss. The source was a folder of session files, which does not say which editor "
            "or server recorded them.\n"
        )
    elif not arms:
        how = (
            "Writers used the toolkit's editor: the prompt is the initial text; pressing Tab asks "
            "the model for suggestions, which appear in a list the writer may accept, navigate or "
            "dismiss. "
        )
    else:
        # Arms of other paradigms than CoAuthor's Tab list: each as it ran (study.release.source).
        described = [f"- `{c['name']}` ({c['paradigm']}): {c.get('arm') or TAB_LIST}" for c in study.conditions]
        how = (
            "Writers used the toolkit's editor: the prompt is the initial text. What they had "
            "beside it depended on their arm (`condition` in `metadata.csv`):\n\n"
            + "\n".join(described) + "\n\n"
        )
    how += within_card.collection(facts)  # within subjects: sessions in sets per writer
    recorded = "" if not study else (
        "The browser logs every event with CoAuthor's names and sends it to the study server, "
        "which stores it before acknowledging it.\n"
    )
    out = [
        "## Collection process\n",
        how + recorded,
        f"**Over what timeframe?** From {facts.first_date} to {facts.last_date} (first and last "
        "event, UTC).\n",
    ]
    if not study:
        out.append(
            "**Who was involved, how were they paid, and what did they consent to?** The source "
            f"was a folder of session files, which records none of this. {CURATOR}\n"
        )
        return "\n".join(out)
    terms = (
        f"The minimum writing time was {_duration(study.min_seconds)}; a writer could take each "
        f"prompt up to {study.max_per_prompt} times."
        if study.min_exchanges is None else chat_card.terms(study)
    )  # fmt: skip
    out.append(
        "**Who was involved, and how were they compensated?** Crowd workers or lab "
        f"participants; the consent page stated a payment of {study.pay or '(not stated)'} for "
        f"about {minutes_text(study.duration_minutes)}. {terms}\n"
    )
    if study.survey:
        noun = "story/essay"
        rows = [(q["id"], q["text"].replace("{noun}", noun), q["type"]) for q in study.survey]
        out.append("**Survey questions:**\n")
        if any(q.get("arms") for q in study.survey):
            # Some questions were asked of some arms only: their other arms' cells are empty.
            rows = [(*row, ", ".join(q.get("arms") or ()) or "every arm") for row, q in zip(rows, study.survey)]
            out.append(table(("id", "question", "type", "asked in"), rows))
            out.append("A question asked in some arms only has an empty cell in `survey.csv` for "
                       "the other arms' sessions: they were not asked it.\n")
        else:
            out.append(table(("id", "question", "type"), rows))
    out.append("**Consent.** Writers agreed to this text before taking part:\n")
    paragraphs = study.consent_text.split("\n\n")
    out.append("\n>\n".join(f"> {paragraph}" for paragraph in paragraphs) + "\n")
    if study.contact:
        out.append(
            f"**The study's contact, published on purpose.** {study.contact} (declared in the "
            "study's configuration as the contact its consent page names, which review boards "
            "require). This is the only e-mail address or phone number the release carries on "
            "purpose; any other, in what participants wrote or answered, was redacted.\n"
        )
    return "\n".join(out)


def _duration(seconds: int) -> str:
    if seconds and seconds % 60 == 0:
        minutes = seconds // 60
        return f"{minutes} minute" + ("s" if minutes != 1 else "")
    return f"{seconds} seconds"


def _preprocessing(facts: ReleaseFacts) -> str:
    places = ", ".join(f"{n} in {place}" for place, n in sorted(facts.redacted_by_place.items()))
    if facts.redacted_by_entity:
        kinds = table(("entity", "redacted"), sorted(facts.redacted_by_entity.items()))
    else:
        kinds = "Nothing was found to redact.\n"
    withdrawn = f" ({facts.withdrawn_excluded} in this release)" if facts.withdrawn_excluded else ""
    return "\n".join([
        "## Preprocessing\n",
        "**Pseudonyms.** Each worker id is replaced by `w` + 20 hex digits of HMAC-SHA256 with a "
        f"secret key and the namespace `{facts.namespace}`, so a writer keeps one pseudonym "
        "across sessions and across releases built with the same key (key fingerprint "
        f"`{facts.key_fingerprint}`). A plain hash would not do: worker ids can be enumerated. "
        "The table that maps pseudonyms back to workers is encrypted and stays with the research "
        "team.\n",
        "**Session ids.** Each session is released under a fresh id, 32 hex digits of "
        "HMAC-SHA256 with the same key and namespace, never the id the study's server used, so "
        "a released log cannot be matched with the running server or its database. A session "
        "keeps its id in every release of this dataset.\n",
        "**Redaction.** Every piece of free text ("
        + ("the prompt and every inserted text as it stood in the document at each moment, the "
           "suggestion lists, survey answers" if facts.sessions else chat_card.REDACTED)
        + (", every message of the conversations" if facts.sessions and facts.conversations else "")
        + ") was scanned with "
        "Microsoft Presidio's pattern recognizers (offline, no language model) for "
        f"{', '.join(ENTITIES)}, including the source's own worker ids of {MIN_KNOWN_ID_LENGTH} "
        "characters or more. Each finding is replaced by a mask of the same length, such as "
        "`<EMAIL_____________>`, where it was typed, so the logs still replay: the text at any "
        "event is the original text with masked characters. Names of people and places are not "
        "detected.\n",
        f"Findings in this release ({places or 'none'}; {facts.redacted_sessions} "
        f"{'sessions' if facts.sessions else 'conversations'} affected):\n",
        kinds,
        ("**Withdrawals.** Sessions of writers" if facts.sessions else
         "**Withdrawals.** Conversations of participants") + f" who withdrew are left out{withdrawn}.\n",
    ] + ([  # a chat study's metadata.csv has no rows to recompute
        "**Recomputed columns.** The metadata columns computed from a log are recomputed from "
        "the released log.\n",
    ] if facts.sessions else []))  # fmt: skip


def _uses(facts: ReleaseFacts) -> str:
    return (
        "## Uses\n\n"
        + ("Research on human-AI collaborative writing: how writers ask for, choose and edit "
           "suggestions, and how that differs by genre and decoding setting. The logs can be "
           "replayed to any moment." if facts.sessions else chat_card.USES)
        + "\n\n"
        "**Not for:** re-identifying writers, or judging individual writers.\n"
    )


def _distribution(facts: ReleaseFacts) -> str:
    # The rules live in one place, the versioning module's docstring, and are quoted here.
    rules = versioning.__doc__.split("\n\n", 1)[1].split("`study release build`")[0].strip()
    return (
        "## Distribution\n\n"
        f"**License:** {facts.license}.\n\n"
        f"The folder is also published as `{facts.name}-{facts.version}.tar.gz`. `{SUMS}` lists "
        f"the SHA-256 of every file (`sha256sum -c {SUMS}`); `{DATAPACKAGE}` describes every file "
        "as a Frictionless Data Package; `study release verify` checks both and scans for "
        "personal data.\n\n"
        "### Versioning\n\n" + rules + "\n"
    )


def _maintenance(facts: ReleaseFacts) -> str:
    return (
        "## Maintenance\n\n"
        f"Changes are listed in `{CHANGELOG}`. A writer may withdraw at any time: their sessions "
        "leave every later release. Errata and withdrawal requests go to the research team.\n\n"
        f"**Contact:** {_contact(facts)}\n"
    )


def _contact(facts: ReleaseFacts) -> str:
    # The contact declared in study.toml is the one participants were told to reach, and is
    # published on purpose (study.release.contact); a folder of sessions declares none.
    if facts.study and facts.study.contact:
        return f"{facts.study.contact} (the study's contact, as its consent page names them)."
    return CURATOR
