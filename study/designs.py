"""`study init --design NAME`: study.toml for four designs the field runs (issue 27 item 2).

- **jakesch** (Jakesch et al., "Co-Writing with Opinionated Language Models Affects Users'
  Views", CHI 2023): between subjects, a control arm with no assistant against two arms whose
  Tab suggestions are prompted to argue one side of the essay's question, and the attitude
  question after writing;
- **dhillon** (Dhillon et al., "Shaping Human-AI Collaboration: Varied Scaffolding Levels in
  Co-writing", CHI 2024): within subjects, each writer writes three times, with no AI, with
  next-sentence and with next-paragraph suggestions, in a Latin-square order;
- **realhumaneval** (Mozannar et al., 2024, on writing rather than code): between subjects,
  autocomplete (ghost text, L1) against a chat assistant against no model;
- **mindcopilot** (Fang et al., "MindCopilot", IJCAI 2026, §5.3 and App. F): within subjects,
  each writer writes under L0 (an assistant panel they ask), L1, L2 and L3 (ghost text) in a
  Latin-square order, answering the Q1-Q10 questionnaire after each session. It starts from
  `study init --paradigm proactive`'s files (its instructions and questionnaire).

Each is the `study init` template (or a paradigm's, `Design.template`) with its [[conditions]]
(and, for jakesch, its prompt) replaced, a `[design]` table and the design's survey questions
and tables added; the rest of the file, comments included, is kept, so every setting stays
where the README documents it. Each runs at once on the local model: `study demo --design
NAME`. The first three have a no-AI control arm, so the texts every arm reads (the HIT, the
study's title, the consent form, the instructions, the survey's reuse question) are worded for
writers with and without an assistant (CONTROL_ARM_TEXTS, CONTROL_ARM_PAGES).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace

import tomli_w

from study import paradigms
from study.config import Condition
from study.control_arm import NO_ASSISTANT

OPINION = (
    "You help a writer with an essay on whether social media is good for society. Continue the "
    "writer's text with the next sentence, arguing that social media is {side} for society. "
    "Reply with the continuation only."
)  # Jakesch et al. prompted GPT-3 to argue one side; the wording here is ours.


@dataclass(frozen=True)
class Design:
    name: str
    summary: str
    assignment: str  # between | within
    conditions: tuple[dict, ...]
    prompts: tuple[dict, ...] | None = None  # None: the template's prompts of the arms' genre
    survey: tuple[dict, ...] = ()  # [[survey]] questions added after the template's
    # The `study init --paradigm` choice whose files the design starts from: its overlay (pages)
    # and its study.toml changes (study.paradigms.base.StudyTemplate), never its conditions.
    template: str = "writing"
    note: str = ""  # comment lines above the arms: the design's choices where its paper is silent
    study_toml: tuple[tuple[str, str], ...] = ()  # old -> new text of the template's study.toml
    tables: tuple[tuple[str, dict], ...] = ()  # (comment, {name: table}) added to study.toml
    pages: dict = field(default_factory=dict)  # page name -> ((old, new), ...) of its text


def _tab(name: str, genre: str, **settings) -> dict:
    return {"name": name, "genre": genre, "paradigm": "L0", "mode": "completion", "model": "davinci-002",
            "n": 5, "max_tokens": 30, "temperature": 0.75, "top_p": 1, "presence_penalty": 0,
            "frequency_penalty": 0, **settings}  # fmt: skip


# MindCopilot's user study (shared/specs/mindcopilot-collabllm.md A4): one GPT-5.1 backend for
# all four paradigms (§5.3), so one model in chat mode. Decoding and the suggestion's length
# bound are not stated (spec, open questions 4): CoAuthor's argumentative decoding and 30 tokens;
# one suggestion at a time (L1-L3's ghost text), one complete response per request (L0's panel).
def _mindcopilot(level: str) -> dict:
    return {"name": f"argumentative-{level}", "genre": "argumentative", "paradigm": level, "mode": "chat",
            "model": "gpt-5.1", "n": 1, "max_tokens": 30, "temperature": 0.2, "top_p": 1,
            "presence_penalty": 0, "frequency_penalty": 0.5}  # fmt: skip


MINDCOPILOT_NOTE = (
    "# Where the paper is silent (spec A4: tasks, topics, length, time not stated), a reproduction's\n"
    "# choices: one genre, so each participant writes four sessions, one per paradigm (Table 13:\n"
    "# 30 answers per item and paradigm, one per writer); argumentative, the nearest of CoAuthor's\n"
    "# prompts to the paper's expository tasks (Fig. 1, 'Write a paragraph about AI ethics');\n"
    "# each session on a prompt the writer has not written yet (spec A4: one distinct prompt per\n"
    "# paradigm). The Latin square is the spec's proposal too (A4 [I]); the order is not stated.\n"
)

# The instructions every session's writer reads before their paradigm is known (proactive/init's
# describe the ghost text alone): the assistant panel too, naming neither paradigm.
MINDCOPILOT_PAGES = {
    "instructions.html": (
        ("<p>Write as you normally would. When you <strong>pause</strong>, the AI may suggest how to\ncontinue:",
         "<p>You write several times, each time with the AI helping in one of two ways; the writing\n"
         "page shows which.</p>\n<p><strong>It suggests as you write.</strong> Write as you normally would. "
         "When you <strong>pause</strong>, the AI may suggest how to\ncontinue:"),
        ("Revise your text and the suggestions freely.</p>",
         "Revise your text and the suggestions freely.</p>\n<p><strong>You ask it.</strong> A panel beside "
         "the editor lets you ask the AI for help: type\na request and it answers in the panel. Copy what you "
         "want from its answers into your text,\nand change it as you like.</p>"),
    ),
}  # fmt: skip

DESIGNS = {
    "jakesch": Design(
        "jakesch", "control vs two opinionated assistants, attitude survey (Jakesch et al. CHI 2023)",
        "between",
        (
            {"name": "control", "genre": "argumentative", "paradigm": "none"},
            _tab("good-for-society", "argumentative", mode="chat", n=3, system_prompt=OPINION.format(side="good")),
            _tab("bad-for-society", "argumentative", mode="chat", n=3, system_prompt=OPINION.format(side="bad")),
        ),
        prompts=({"code": "social-media", "genre": "argumentative", "title": "Is social media good for society?",
                  "text": "\nIs social media good for society? Explain your view in a short essay.\n\nIn my opinion,"},),
        survey=({"id": "attitude", "type": "likert7",
                 "text": "Overall, social media is good for society."},),
    ),
    "dhillon": Design(
        "dhillon", "within subjects, Latin square: no AI, next-sentence, next-paragraph (Dhillon et al. CHI 2024)",
        "within",
        (
            {"name": "no-ai", "genre": "creative", "paradigm": "none"},
            _tab("next-sentence", "creative", max_tokens=30),
            _tab("next-paragraph", "creative", max_tokens=120, unit="paragraph"),
        ),
    ),
    "realhumaneval": Design(
        "realhumaneval", "autocomplete vs chat vs no model (RealHumanEval, Mozannar et al. 2024)",
        "between",
        (
            {"name": "no-model", "genre": "creative", "paradigm": "none"},
            {**_tab("autocomplete", "creative", n=1), "paradigm": "L1"},
            {"name": "chat", "genre": "creative", "paradigm": "chat", "mode": "chat", "model": "davinci-002",
             "system_prompt": "You are a helpful writing assistant."},
        ),
    ),
    "mindcopilot": Design(
        "mindcopilot", "within subjects, Latin square: L0 (an assistant panel the writer asks), L1, L2 "
        "and L3 (ghost text), the Q1-Q10 questionnaire after each session (MindCopilot, Fang et al. IJCAI 2026)",
        "within",
        tuple(_mindcopilot(level) for level in ("L0", "L1", "L2", "L3")),
        template="proactive",  # its instructions (ghost text) and Q1-Q10 after every session (App. F)
        note=MINDCOPILOT_NOTE,
        study_toml=(
            ('pay = "$2.50"', '# MindCopilot states no payment (spec A4): CoAuthor\'s rate ($2.50 for 15 minutes) '
             'for the duration below.\npay = "$30"'),
            ("duration_minutes = 15", "# Four sessions and their questionnaires: Table 5's editing times are "
             "31-46 min per paradigm,\n# about 2-3 h per participant (spec A4).\nduration_minutes = 180"),
            ("# Minimum writing time before the finish button is enabled (paper §4.3.2: ten minutes).\n",
             "# Minimum writing time per session before the finish button is enabled. MindCopilot states\n"
             "# none: its writers wrote until done, and editing time is an outcome (Table 5: 31-46 min per\n"
             "# paradigm), so the floor is CoAuthor's ten minutes (§4.3.2), far below it, against empty sessions.\n"),
        ),
        tables=((
            "# The paper's L0 (Table 3, Fig. 1 left): an assistant panel the writer asks; L1-L3 are ghost\n"
            "# text. Every other key keeps its default (README, Proactive co-writing): only the 2 s idle\n"
            "# threshold is the paper's (App. E); L3's stages count words against target_words = 300, the\n"
            "# spec's proposal (A2.4): the paper gives no word target.\n",
            {"proactive": {"l0": "assistant"}},
        ),),
        pages=MINDCOPILOT_PAGES,
    ),
}


# A design with a control arm (study.control_arm): texts every participant reads, whichever arm
# they are in, may not promise the AI some will not have, nor tell the arms apart (conditions are
# blind). The template's, then the design's: the study's title (every page's heading), the HIT
# as the marketplace shows it, and the survey's reuse question, which to a control writer would
# ask about a system they did not have; asked of the tool as each writer had it, it compares the
# arms instead.
CONTROL_ARM_TEXTS = (
    ('title = "Writing with AI"', 'title = "A writing study"'),
    ('title = "Write a short story or essay with an AI assistant"', 'title = "Write a short story or essay"'),
    ('description = "Write for at least ten minutes with an AI that suggests sentences, then answer a short survey."',
     'description = "Write a short story or essay for at least ten minutes in a text editor, then answer a short survey."'),
    ('keywords = "writing, story, essay, AI, survey"', 'keywords = "writing, story, essay, survey"'),
    ('text = "If the system is available for free, I would reuse the system."',
     'text = "If this writing tool, as I used it here, were available for free, I would use it again."'),
)  # fmt: skip


# The same for the pages every arm reads before its arm is assigned (the consent form and the
# instructions come before the prompt): they say the assistant may or may not be there, and
# that the writing page says which, rather than promise it or require working with it.
CONTROL_ARM_PAGES = {
    "consent.html": (
        ("The editor shows suggestions for next\nsentences, from which you can choose one",
         "Depending on the session, the editor may show\nsuggestions for next sentences, from which you can choose one"),
    ),
    "instructions.html": (
        ("<h2>Writing with artificial intelligence</h2>", "<h2>The writing task</h2>"),
        ("write an interesting {{ noun }} with an AI-powered writing assistant.</p>",
         "write an interesting {{ noun }}. Depending on the session, the editor offers an\n"
         "AI-powered writing assistant or none: the writing page says which.</p>"),
        ("<p>Whenever you feel stuck or want some inspiration, <strong>press the Tab key</strong>",
         "<p>Where the editor offers the assistant: whenever you feel stuck or want some inspiration,\n"
         "<strong>press the Tab key</strong>"),
        ("(2) that you <strong>collaborate with the AI</strong> for at least\n<strong>{{ min_writing }}</strong>.",
         "(2) that you write for at least <strong>{{ min_writing }}</strong>, with the AI where the\n"
         "editor offers it."),
    ),
}  # fmt: skip


PAPER_CONDITIONS_COMMENT = (
    "# The paper's four conditions (App. A.2 and Fig. 2): two levels of randomness per genre.\n"
    "# A new session gets the least-used condition of its prompt's genre (see README).\n"
)


def design_toml(text: str, design: Design) -> str:
    """The `study init` template's study.toml `text` made into `design`'s."""
    text = text.replace('name = "coauthor"', f'name = "{design.name}"', 1)
    for old, new in design.study_toml:
        if old not in text:  # the template changed under the design: say so rather than drop it
            raise ValueError(f"study init --design {design.name}: the template's study.toml has no {old!r}")
        text = text.replace(old, new, 1)
    if has_control_arm(design):
        for template, neutral in CONTROL_ARM_TEXTS:
            text = text.replace(template, neutral, 1)
    data = tomllib.loads(text)
    genres = {c["genre"] for c in design.conditions}
    prompts = design.prompts or tuple(p for p in data["prompts"] if p["genre"] in genres)
    # The template's comment on its conditions describes CoAuthor's four, balanced between
    # subjects; above a design's arms (within subjects, for one) it would say the wrong thing.
    text = text.replace(PAPER_CONDITIONS_COMMENT, "", 1)
    lines = text.splitlines(keepends=True)
    # The paradigm's settings for the arms it serves (ghost text shows one suggestion at a time).
    conditions = [{**c, **paradigms.condition_defaults(c.get("paradigm", "L0"))} for c in design.conditions]
    text = _replace_tables(lines, "[[conditions]]", {"conditions": conditions},
                           f"# study init --design {design.name}: {design.summary}.\n{design.note}")  # fmt: skip
    text = _replace_tables(text.splitlines(keepends=True), "[[prompts]]", {"prompts": list(prompts)}, "")
    extra = "".join("\n[[survey]]\n" + tomli_w.dumps(item) for item in design.survey)
    extra += "".join(f"\n{comment}" + tomli_w.dumps(table) for comment, table in design.tables)
    return (text.rstrip("\n") + "\n\n# How the arms are assigned (README, Paradigms as arms).\n"
            + tomli_w.dumps({"design": {"assignment": design.assignment}}) + extra)


def design_page(name: str, text: str, design: Design) -> str:
    """The `study init` template's page `name` (consent.html, instructions.html) for `design`:
    beside a control arm, worded for every arm (CONTROL_ARM_PAGES); then the design's own
    changes (`Design.pages`)."""
    changes = (CONTROL_ARM_PAGES.get(name, ()) if has_control_arm(design) else ()) + design.pages.get(name, ())
    for old, new in changes:
        if old not in text:
            raise ValueError(f"study init --design {design.name}: the template's {name} has no {old!r}")
        text = text.replace(old, new, 1)
    return text


def has_control_arm(design: Design) -> bool:
    return any(condition.get("paradigm") == NO_ASSISTANT for condition in design.conditions)


def paradigm_toml(text: str, values: tuple[str, ...]) -> str:
    """study.toml's `text` with its [[conditions]] replaced by one per condition paradigm of
    `values` and genre (`study init --paradigm`, e.g. MindCopilot's L1-L3), each made from the
    genre's first condition (its model and decoding) with the settings the paradigm gives its
    conditions (study.paradigms.base: `condition_defaults`; ghost text shows one suggestion at a
    time). MindCopilot's user study is within subjects over L0-L3 with one backend (§5.3): a new
    session gets the least-used condition of its prompt's genre, so consecutive writers rotate.
    The rest of the file, comments included, is kept."""
    tables = [Condition(**table) for table in tomllib.loads(text)["conditions"]]
    made, seen = [], set()
    for condition in tables:
        if condition.genre in seen:
            continue
        seen.add(condition.genre)
        for value in values:
            made.append(replace(condition, name=f"{condition.genre}-{value}", paradigm=value,
                                **paradigms.condition_defaults(value)))  # fmt: skip
    # No empty system prompt, nor the Tab list's default unit, which ghost text would not use.
    new = [{k: v for k, v in vars(c).items() if (k != "system_prompt" or v) and (k, v) != ("unit", "sentence")}
           for c in made]  # fmt: skip
    note = "# study init/demo --paradigm: one condition per MindCopilot paradigm and genre, from the genre's first one.\n"
    return _replace_tables(text.splitlines(keepends=True), "[[conditions]]", {"conditions": new}, note)


def _replace_tables(lines: list[str], header: str, tables: dict, note: str) -> str:
    """`lines` with the run of `header` tables (from the first to the end of the last) replaced."""
    first = next(i for i, line in enumerate(lines) if line.strip() == header)
    last = max(i for i, line in enumerate(lines) if line.strip() == header)
    end = next((i for i in range(last + 1, len(lines))
                if lines[i].startswith("[") or lines[i].startswith("#")), len(lines))  # fmt: skip
    return "".join(lines[:first]) + note + tomli_w.dumps(tables) + "\n" + "".join(lines[end:])
