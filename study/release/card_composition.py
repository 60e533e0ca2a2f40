"""The dataset card's Composition section: what the instances are, the study's arms (conditions)
as its released sessions ran them, and what each released file holds (study.release.card puts it
between Motivation and Collection process)."""

from __future__ import annotations

from study.release import arms_as_run, chat_card, within, within_card
from study.release.facts import ReleaseFacts
from study.release.layout import CONVERSATIONS, METADATA_CSV, METADATA_PARQUET, STATS_CSV, SUMMARY_CSV, SURVEY_CSV
from study.release.markdown import table

# The study's design, carried from a study folder (study.release.design).
DESIGN_FILES = {
    "arms.json": "- `arms.json`: every arm (condition) of the study as its released sessions ran it, "
    "with its paradigm (\"none\": no assistant, the control arm), genre, the model its calls asked "
    "for (`model`) and the models that answered (`answered_models`), decoding settings and "
    "`sessions`; an arm changed during the study has an entry per setting that ran, `null` is a "
    "setting not recorded, an arm with `sessions` 0 is as `study.toml` has it; `closed` is true for "
    "an arm closed to new participants (`assign = false` in `study.toml` when the release was "
    "built); `metadata.csv` names each session's `condition` and `paradigm`.",
    "judging": "- `judging/`: the judging round. `judging_ratings.csv` holds one rating per row, "
    "joined to its session and arm (a sentence by its `position` in the session's final text, "
    "split with pysbd; judges are pseudonyms, blind to the arm; `kept` is false for judges who "
    "failed the gold items); `judging_sessions.csv` each session's mean kept score; "
    "`judging_judges.csv` the gold check; `judging_rubric.json` the question, rubric, rules and "
    "Krippendorff's alpha with its 95% bootstrap interval.",
    "preregistration.json": "- `preregistration.json`: the study's plan, recorded before launch "
    "and signed (Ed25519; `study preregister verify` checks it): configuration, arms, outcome "
    "measures and planned comparisons.",
    within.WITHIN: within_card.FILE,
}



def composition(s: ReleaseFacts) -> str:
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
        out.append(table(("genre", "sessions"), sorted(s.genres.items())))
    # A study folder's release has one table of its conditions, as its released sessions ran
    # them (_arms: genre, decoding settings and sessions, and more); a folder of sessions (the
    # CoAuthor release as distributed) has only metadata.csv's settings to group by.
    if s.conditions and not s.arms:
        out.append("**Conditions** (decoding settings of the suggestions):\n")
        conditions = sorted(s.conditions.items())
        rows = [(g or "-", t or "-", fp or "-", n) for (g, t, fp), n in conditions]
        out.append(table(("genre", "temperature", "frequency penalty", "sessions"), rows))
    if s.arms:  # a study folder's: as its released sessions ran them, not as study.toml says now
        out.append(arms(s))
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
        "randomness of the decoding settings: `high` or `low` for CoAuthor's (its Figure 2: "
        "temperature 0.75 or 0.9 is `high`, 0.3 or 0.2 `low`, both genres pooled), "
        "`T=<temperature> FP=<frequency penalty>` for others). A session without a Tab list (a control or chat arm's) has its "
        "suggestion counts empty, not applicable, here as in `metadata.csv`, and is left out of "
        "the means of queries and acceptance; a control arm's session (no model) has its equality "
        "and mutuality empty too, and is left out of their means.",
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


def arms(s: ReleaseFacts) -> str:
    noun = "sessions" if s.sessions else "conversations"
    what = "conditions" if s.sessions else "assistants (participants saw a label)"
    header = ("condition", "paradigm", "genre", "model", "answered by", "mode", "n", "max tokens",
              "temperature", "top p", "presence penalty", "frequency penalty", "unit", noun,
              "new participants")  # fmt: skip
    rows = [
        (arm.name, arm.paradigm, arm.genre or "-",
         *(["-"] * 10 if arm.control else
           [arms_as_run.text(arm.values("model")), ", ".join(arm.answered) or arms_as_run.NOT_RECORDED,
            *(arms_as_run.text(arm.values(key)) for key in arms_as_run.SETTINGS[1:])]),
         arm.sessions, "closed" if arm.closed else "open")
        for arm in s.arms.arms if arm.sessions
    ]  # fmt: skip
    out = (
        f"The {what}, as the released {noun} ran them: the model and settings each model call "
        "was sent with and the model the endpoint named in its reply (else the settings in the "
        f"session's log); a condition whose settings changed during the study has a row per "
        f"setting it ran with. \"{arms_as_run.NOT_RECORDED}\": nothing stored with the {noun} "
        "says (no model call, or stored before the toolkit recorded it).\n\n" + table(header, rows)
    )
    closed = [f"`{arm.name}`" for arm in s.arms.arms if arm.closed and arm.sessions]
    if closed:
        # A reader comparing the arms' sizes must not take a closed arm's smaller count for chance.
        names = ", ".join(dict.fromkeys(closed))
        out += (f"\n**Closed to new participants:** {names} (`assign = false` in `study.toml` when "
                f"this release was built): {'it' if len(set(closed)) == 1 else 'each'} took no new "
                f"participant after it was closed, so its count of {noun} is no measure of how "
                "participants were divided between the arms.\n")
    if s.arms.notes:
        out += "\n**`study.toml` now says otherwise.** " + " ".join(s.arms.notes) + "\n"
    return out
