"""`study init --design NAME`: study.toml for three designs the field runs (issue 27 item 2).

- **jakesch** (Jakesch et al., "Co-Writing with Opinionated Language Models Affects Users'
  Views", CHI 2023): between subjects, a control arm with no assistant against two arms whose
  Tab suggestions are prompted to argue one side of the essay's question, and the attitude
  question after writing;
- **dhillon** (Dhillon et al., "Shaping Human-AI Collaboration: Varied Scaffolding Levels in
  Co-writing", CHI 2024): within subjects, each writer writes three times, with no AI, with
  next-sentence and with next-paragraph suggestions, in a Latin-square order;
- **realhumaneval** (Mozannar et al., 2024, on writing rather than code): between subjects,
  autocomplete (ghost text, L1) against a chat assistant against no model.

Each is the `study init` template with its [[conditions]] (and, for jakesch, its prompt)
replaced, a `[design]` table and the design's survey questions added; the rest of the file,
comments included, is kept, so every setting stays where the README documents it. Each runs
at once on the local model: `study demo --dir FOLDER`. All three have a no-AI control arm, so
the texts every arm reads (the HIT, the study's title, the consent form, the instructions, the
survey's reuse question) are worded for writers with and without an assistant
(CONTROL_ARM_TEXTS, CONTROL_ARM_PAGES).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace

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


def _tab(name: str, genre: str, **settings) -> dict:
    return {"name": name, "genre": genre, "paradigm": "L0", "mode": "completion", "model": "davinci-002",
            "n": 5, "max_tokens": 30, "temperature": 0.75, "top_p": 1, "presence_penalty": 0,
            "frequency_penalty": 0, **settings}  # fmt: skip


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
            _tab("next-paragraph", "creative", max_tokens=120),
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
    text = _replace_tables(lines, "[[conditions]]", {"conditions": list(design.conditions)},
                           f"# study init --design {design.name}: {design.summary}.\n")  # fmt: skip
    text = _replace_tables(text.splitlines(keepends=True), "[[prompts]]", {"prompts": list(prompts)}, "")
    extra = "".join("\n[[survey]]\n" + tomli_w.dumps(item) for item in design.survey)
    return (text.rstrip("\n") + "\n\n# How the arms are assigned (README, Paradigms as arms).\n"
            + tomli_w.dumps({"design": {"assignment": design.assignment}}) + extra)


def design_page(name: str, text: str, design: Design) -> str:
    """The `study init` template's page `name` (consent.html, instructions.html) for `design`:
    beside a control arm, worded for every arm (CONTROL_ARM_PAGES)."""
    if not has_control_arm(design):
        return text
    for template, neutral in CONTROL_ARM_PAGES.get(name, ()):
        text = text.replace(template, neutral, 1)
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
    new = [{k: v for k, v in vars(c).items() if k != "system_prompt" or v} for c in made]
    note = "# study init/demo --paradigm: one condition per MindCopilot paradigm and genre, from the genre's first one.\n"
    return _replace_tables(text.splitlines(keepends=True), "[[conditions]]", {"conditions": new}, note)


def _replace_tables(lines: list[str], header: str, tables: dict, note: str) -> str:
    """`lines` with the run of `header` tables (from the first to the end of the last) replaced."""
    first = next(i for i, line in enumerate(lines) if line.strip() == header)
    last = max(i for i, line in enumerate(lines) if line.strip() == header)
    end = next((i for i in range(last + 1, len(lines))
                if lines[i].startswith("[") or lines[i].startswith("#")), len(lines))  # fmt: skip
    return "".join(lines[:first]) + note + tomli_w.dumps(tables) + "\n" + "".join(lines[end:])
