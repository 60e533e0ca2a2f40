"""The dataset card (README.md): a Hugging Face YAML header, then the questions of
"Datasheets for Datasets" (Gebru et al., CACM 2021), answered from what the toolkit knows.

Where the toolkit cannot know an answer (who funded the work, a contact address), the card says
so in an italic note for the curator to fill in before publishing.
"""

from __future__ import annotations

import json

from study.config import minutes_text
from study.release import arms_as_run, chat_card, versioning
from study.release.facts import ReleaseFacts
from study.release.layout import (
    CHANGELOG,
    CONVERSATIONS,
    DATAPACKAGE,
    METADATA_CSV,
    METADATA_PARQUET,
    STATS_CSV,
    SUMMARY_CSV,
    SUMS,
    SURVEY_CSV,
)
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


# The study's design, carried from a study folder (study.release.design).
DESIGN_FILES = {
    "arms.json": "- `arms.json`: every arm (condition) of the study as its released sessions ran it, "
    "with its paradigm (\"none\": no assistant, the control arm), genre, the model its calls asked "
    "for (`model`) and the models that answered (`answered_models`), decoding settings and "
    "`sessions`; an arm changed during the study has an entry per setting that ran, `null` is a "
    "setting not recorded, an arm with `sessions` 0 is as `study.toml` has it; `metadata.csv` "
    "names each session's `condition` and `paradigm`.",
    "judging": "- `judging/`: the judging round. `judging_ratings.csv` holds one rating per row, "
    "joined to its session and arm (a sentence by its `position` in the session's final text, "
    "split with pysbd; judges are pseudonyms, blind to the arm; `kept` is false for judges who "
    "failed the gold items); `judging_sessions.csv` each session's mean kept score; "
    "`judging_judges.csv` the gold check; `judging_rubric.json` the question, rubric, rules and "
    "Krippendorff's alpha with its 95% bootstrap interval.",
    "preregistration.json": "- `preregistration.json`: the study's plan, recorded before launch "
    "and signed (Ed25519; `study preregister verify` checks it): configuration, arms, outcome "
    "measures and planned comparisons.",
}


def render(facts: ReleaseFacts) -> str:
    what = (
        f"Keystroke-level logs of people writing with AI suggestions, in the CoAuthor format ({PAPER})"
        if facts.sessions else chat_card.WHAT
    )  # fmt: skip
    intro = f"{what}. Version {facts.version}, {facts.date}. Built by the `study` toolkit (`study release build`).\n"
    sections = (_motivation, _composition, _collection, _preprocessing, _uses, _distribution,
                _maintenance)  # fmt: skip
    parts = [yaml_header(facts), f"# {facts.title}\n", intro]
    return "\n".join(parts + [section(facts) for section in sections])


def _table(header: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


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
        f"**Who created it, and who funded it?** {CURATOR}\n"
    )


def _composition(s: ReleaseFacts) -> str:
    instances = (
        "Writing sessions: one writer, one prompt, one condition. This release has "
        f"**{s.sessions} sessions** by **{s.writers} writers** ({s.events:,} events)"
        if s.sessions else
        "Conversations: one participant writing one document with one assistant. This release "
        f"has **{s.conversations} conversations** by **{s.writers} participants** ({s.messages:,} messages)"
    )  # fmt: skip
    out = [
        "## Composition\n",
        f"**What do the instances represent?** {instances}, written from {s.first_date} to {s.last_date}.\n",
    ]
    if s.simulated:
        out.append(
            (f"**{s.simulated} of these sessions were written by simulated writers** (`study "
             if s.sessions else
             f"**{s.simulated} of these conversations were had by simulated participants** (`study ")
            + "simulate`: a language model playing a participant), not by people; "
            + ("`metadata.csv` marks them `simulated=true`" if s.sessions else
               f"`{CONVERSATIONS}` marks them `\"simulated\": true`")
            + ". Leave them out of any analysis of human writing.\n"
        )
    if s.genres:
        out.append(_table(("genre", "sessions"), sorted(s.genres.items())))
    # A study folder's release has one table of its conditions, as its released sessions ran
    # them (_arms: genre, decoding settings and sessions, and more); a folder of sessions (the
    # CoAuthor release as distributed) has only metadata.csv's settings to group by.
    if s.conditions and not s.arms:
        out.append("**Conditions** (decoding settings of the suggestions):\n")
        conditions = sorted(s.conditions.items())
        rows = [(g or "-", t or "-", fp or "-", n) for (g, t, fp), n in conditions]
        out.append(_table(("genre", "temperature", "frequency penalty", "sessions"), rows))
    if s.arms:  # a study folder's: as its released sessions ran them, not as study.toml says now
        out.append(_arms(s))
    if s.sessions:
        per_prompt = ", ".join(f"{code} {n}" for code, n in sorted(s.prompts.items()))
        out.append(f"**Prompts:** {len(s.prompts)} prompts (sessions per prompt code: {per_prompt}).\n")
    interface = (
        ", and `schemas/coauthor-interface.schema.json` for sessions of the later interface"
        if s.formats.get("coauthor-interface")
        else ""
    )
    files = [] if not s.sessions else [
        "- `sessions/<session_id>.jsonl`: the event log, one JSON record per line, in the "
        f"CoAuthor 2021 release format (record schema: `schemas/coauthor-2021.schema.json`"
        f"{interface}). Replaying the `textDelta`s from the prompt (`currentDoc` of the first "
        "event) gives the text at any moment.",
        f"- `{METADATA_CSV}` / `{METADATA_PARQUET}`: one row per session with CoAuthor's metadata "
        "columns (defined in `datapackage.json`); `worker_id` is a pseudonym.",
        f"- `{STATS_CSV}`: statistics per session from the toolkit's curation core (final length, "
        "the writer's share of the final text, equality and mutuality over event blocks, "
        "distinct-2, event block counts, and where the text came from: `typed_share`, "
        "`assistant_share` and `outside_share` of the final text, and `outside_inserts`, the "
        "inserts of text from outside the study, so a reader can drop or keep those sessions); "
        f"`{SUMMARY_CSV}`: their means by genre and by "
        "condition (the paper's Table 3; a condition is the arm `metadata.csv` names, else the "
        "decoding settings). A session without a Tab list (a control or chat arm's) has its "
        "suggestion counts empty, not applicable, here as in `metadata.csv`, and is left out of "
        "the means of queries and acceptance.",
    ]
    if s.survey_sessions:
        files.append(
            f"- `{SURVEY_CSV}`: the post-session survey answers of {s.survey_sessions} sessions "
            f"(columns: {', '.join(s.survey_columns)})."
        )
    if s.conversations:
        files.append(
            f"- `{CONVERSATIONS}`: {s.conversations} conversations ({s.messages:,} messages), one JSON "
            "record per line (schema: `schemas/chat-release.schema.json`), under the session's "
            "released id and the writer's pseudonym: " + (
                "each chat arm session's conversation with the assistant in the panel beside the "
                "editor, whose log is `sessions/<session_id>.jsonl`."
                if s.sessions else
                "the messages with their times (and what each reply read), the assistant (its "
                "condition and the label participants saw), the intent and pre-writing notes, the "
                "ratings during the chat and the final survey, the document at the finish and its "
                "pane's edits (`events`, Quill deltas as in CoAuthor). The writing sessions' "
                f"tables (`{METADATA_CSV}`, `{METADATA_PARQUET}`, `{STATS_CSV}`, `{SUMMARY_CSV}`) "
                "have no rows: this study had no CoAuthor editor."
            )
        )  # fmt: skip
    # A chat study's arms are its assistants, and it has no metadata.csv rows to name them.
    design = {**DESIGN_FILES, "arms.json": DESIGN_FILES["arms.json"] if s.sessions else chat_card.ARMS}
    files += [design[name] for name in s.design_files if name in design]
    out.append("**What data does each instance consist of?**\n\n" + "\n".join(files) + "\n")
    out.append("**Is there a label or target?** No. **Are there recommended splits?** No.\n")
    out.append(
        "**Does the dataset contain data that might be considered confidential or identify "
        "people?** Worker ids are replaced by keyed pseudonyms, and personal data found in the "
        "text was masked (see Preprocessing). Writers were free to write anything; the texts may "
        "still reveal personal details that no pattern recognises, such as names.\n"
    )
    return "\n".join(out)


def _arms(s: ReleaseFacts) -> str:
    noun = "sessions" if s.sessions else "conversations"
    what = "conditions" if s.sessions else "assistants (participants saw a label)"
    header = ("condition", "paradigm", "genre", "model", "answered by", "mode", "n", "max tokens",
              "temperature", "top p", "presence penalty", "frequency penalty", noun)  # fmt: skip
    rows = [
        (arm.name, arm.paradigm, arm.genre or "-",
         *(["-"] * 9 if arm.control else
           [arms_as_run.text(arm.values("model")), ", ".join(arm.answered) or arms_as_run.NOT_RECORDED,
            *(arms_as_run.text(arm.values(key)) for key in arms_as_run.SETTINGS[1:])]),
         arm.sessions)
        for arm in s.arms.arms if arm.sessions
    ]  # fmt: skip
    out = (
        f"The {what}, as the released {noun} ran them: the model and settings each model call "
        "was sent with and the model the endpoint named in its reply (else the settings in the "
        f"session's log); a condition whose settings changed during the study has a row per "
        f"setting it ran with. \"{arms_as_run.NOT_RECORDED}\": nothing stored with the {noun} "
        "says (no model call, or stored before the toolkit recorded it).\n\n" + _table(header, rows)
    )
    if s.arms.notes:
        out += "\n**`study.toml` now says otherwise.** " + " ".join(s.arms.notes) + "\n"
    return out


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
    if study and study.assignment == "within":
        # A reader pairing sessions needs to know they come in sets per writer, and in which order.
        how += (
            "**Arms were assigned within subjects:** each writer (`worker_id` in `metadata.csv`) "
            "was to write one session in every arm of the prompt's genre, in the order of a row of "
            "a Latin square (Williams' design for an even number of arms, the cyclic square for an "
            "odd one), the r-th writer to begin taking row r; `timestamp` gives each writer's "
            "order. Compare a writer's sessions with each other (paired), not as independent "
            "groups.\n\n"
        )
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
        out.append(_table(("id", "question", "type"), rows))
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
        kinds = _table(("entity", "redacted"), sorted(facts.redacted_by_entity.items()))
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
        f"**Contact:** {CURATOR}\n"
    )
