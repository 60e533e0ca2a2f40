"""The files study.toml names, as participants get them, for the preregistration record.

study.toml holds a file's name only: the same name may hold other words after the record (an
intent reworded in the chat paradigm's bank, a word added to the blocklist, a round's
instructions rewritten), and the configuration alone would not show it. So the record keeps,
by the study.toml key naming each file, what the file holds as participants get it (parsed:
a comment edited in the blocklist changes nothing a writer sees) and its SHA-256, and
`compare` names what changed in it.

Recorded: the core's files, here, and each paradigm's, by its `config` module's
`named_files(study)` (study.paradigms.base). Left out on purpose: [texts] consent and
instructions (their digests have their own key of the record, `texts_sha256`, which older
records hold), survey files (recorded as asked, study.plan.record.surveys), [study]
access_codes_file (who may take part, not what they see, and a secret the published record
must not hold), and a chat study's notice_file (written to be edited live, spec C6.1) and
simulator goal_documents (read by `study simulate` only).
"""

from __future__ import annotations

import difflib
import hashlib
import json

from study import paradigms
from study.config import Study
from study.judging import gold as gold_module
from study.judging import settings as judging_settings
from study.plan.changes import changes, shown
from study.review import settings as review_settings


def canonical_sha256(content) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def named_files(study: Study) -> dict[str, dict]:
    """study.toml key -> {"sha256", "content"}: each file it names as participants get it."""
    found = _core_files(study)
    for paradigm in paradigms.registered():
        found.update(paradigm.named_files(study))
    return {key: {"sha256": canonical_sha256(content), "content": content} for key, content in found.items()}


def _core_files(study: Study) -> dict:
    found = {}
    if study.raw.get("suggestions", {}).get("blocklist_file"):
        # A set: the order and repeats of its lines do not change what is blocked.
        found["suggestions.blocklist_file"] = sorted(set(study.suggestions.blocklist))
    for chosen in review_settings.from_study(study).rounds:
        if chosen.instructions:
            text = (study.directory / chosen.instructions).read_text(encoding="utf-8")
            found[f"rounds[{chosen.name}].instructions"] = text.splitlines()
    if study.raw.get("judging", {}).get("gold"):
        settings = judging_settings.from_study(study)
        try:
            items = gold_module.read(study.directory / settings.gold, settings.scores)
        except gold_module.GoldError as error:
            raise ValueError(str(error)) from None
        # The judges' texts with the score they are checked against (study.judging.gold).
        found["judging.gold"] = [{"text": item.text, "score": item.score} for item in items]
    return found


def compare(recorded: dict[str, dict], now: dict[str, dict]) -> list[tuple[str, str]]:
    """(what, detail) for every file whose content differs from the record's, by its key."""
    found = []
    for key in sorted(recorded.keys() | now.keys()):
        before, after = recorded.get(key), now.get(key)
        if before is None:
            found.append((key, f"read after the record only (SHA-256 {after['sha256'][:12]}...)"))
        elif after is None:
            found.append((key, f"no longer read after the record (was SHA-256 {before['sha256'][:12]}...)"))
        elif before["sha256"] != after["sha256"]:
            found += _content_changes(key, before, after)
    return found


def _content_changes(key: str, before: dict, after: dict) -> list[tuple[str, str]]:
    old, new = before.get("content"), after.get("content")
    digests = f"SHA-256 {before['sha256'][:12]}... -> {after['sha256'][:12]}..."
    if _strings(old) and _strings(new) and key.endswith(".instructions"):
        # A page's lines: which of them were rewritten, not both pages on one line.
        lines = sorted({i + 1 for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=old, b=new).get_opcodes()
                        if tag != "equal" for i in range(i1, max(i2, i1 + 1))})  # fmt: skip
        return [(key, f"the text participants read changed after the record (line(s) "
                      f"{', '.join(map(str, lines))}; {digests})")]  # fmt: skip
    if _strings(old) and _strings(new):
        added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
        parts = ([f"added {', '.join(map(shown, added))}"] if added else []) + (
            [f"removed {', '.join(map(shown, removed))}"] if removed else [])
        return [(key, f"{'; '.join(parts)} after the record ({digests})")]
    listed = changes(old, new, key)
    return listed or [(key, f"changed after the record ({digests})")]


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
