"""The preregistration record: what it holds, how it is signed, how it is checked.

The record is canonical JSON (sorted keys, no spaces) signed with Ed25519; the public key and
the signature are in the record, in lower-case hex (which a release's leak scan reads as the
digests it is), the private key in DIR/preregistration.key (mode 600, never in a release). A
signature proves the record was not changed since it was signed by whoever holds the key; it
cannot prove *when* by itself, so `study preregister` prints the record's SHA-256 for a
third-party timestamp (OSF, AsPredicted, an e-mail to the review board), as preregistration
services expect.

What is recorded: study.toml as parsed (without [study] database, which may hold a password,
and without any user:password in [suggestions] endpoint),
its SHA-256, the arms, [plan] (hypotheses, exclusions and their rules, outcomes, comparisons), the SHA-256
of the consent and instructions texts participants will read, every survey's questions as
participants will be asked them (with a `[[surveys]]` preset's or file's, which study.toml only names),
and what each other file it names holds (`files`: the blocklist, a round's instructions, the
judges' gold items, a paradigm's own such as the chat intent bank; study.plan.files).
A record made with `--replace` also holds the time and SHA-256 of the record it replaced
(`replaces`), which is kept beside it (`set_aside`).
A record made before a key was added is compared on the keys it holds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import dataclasses
import json
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from study import control_arm
from study.config import CONFIG_NAME, Study
from study.curation.stats import COLUMNS as STATS_COLUMNS
from study.model_client import safe_url
from study.plan import exclude
from study.plan import files as plan_files

RECORD_NAME = "preregistration.json"
KEY_NAME = "preregistration.key"
FORMAT = "study-preregistration/1"
ARM_FIELDS = ("name", "paradigm", "genre", "model", "mode", "n", "max_tokens", "temperature", "top_p",
              "presence_penalty", "frequency_penalty", "unit", "system_prompt", "assign")  # fmt: skip
# What an arm field was in a record made before it was recorded: every arm was open then, and
# every Tab suggestion a first sentence.
ARM_FIELD_DEFAULTS = {"assign": True, "unit": "sentence"}


class PlanError(ValueError):
    """A plan that cannot be recorded or a record that cannot be trusted, worded for the researcher."""


def canonical(value: dict) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def configuration(study: Study) -> dict:
    raw = json.loads(json.dumps(study.raw, default=str))
    raw.get("study", {}).pop("database", None)
    # The endpoint stays (it says which model answered), without a user:password a proxy may
    # take in the address: the record is published, in releases too.
    suggestions = raw.get("suggestions", {})
    if isinstance(suggestions.get("endpoint"), str) and suggestions["endpoint"]:
        suggestions["endpoint"] = safe_url(suggestions["endpoint"])
    return raw


def arms(study: Study) -> list[dict]:
    return [{field: getattr(c, field) for field in ARM_FIELDS} for c in study.conditions]


def assignment(signed: dict) -> str | None:
    """The design the record fixed: its study.toml's [design] assignment ("between" where it had
    none, study.config's default), which decides how a planned comparison is taken
    (study.plan.comparisons.pairing); None for a record without the configuration."""
    configuration = signed.get("configuration")
    if not isinstance(configuration, dict):
        return None
    design = configuration.get("design")
    return str(design.get("assignment", "between")) if isinstance(design, dict) else "between"


def check_plan(study: Study) -> dict:
    """[plan] as recorded; a comparison naming an unknown outcome or arm, or of an arm with itself,
    or an exclusion rule that cannot be applied (study.plan.exclude.check), is an error."""
    plan = study.raw.get("plan", {})
    source = study.directory / CONFIG_NAME
    outcomes = {o["name"] for o in plan.get("outcomes", [])}
    names = {c.name for c in study.conditions}
    problems = []
    measures = sorted(set(STATS_COLUMNS) - {"session_id", "format"}) + ["judging"]
    seen = set()
    for i, outcome in enumerate(plan.get("outcomes", [])):
        if outcome["name"] in seen:
            # A comparison names its outcome: which measure it compares must not be an accident of order.
            problems.append(f"{source}: plan.outcomes[{i}].name: {outcome['name']!r} is used twice. "
                            "Fix: give every [[plan.outcomes]] its own name.")  # fmt: skip
        seen.add(outcome["name"])
        if outcome["measure"] not in measures:
            problems.append(f"{source}: plan.outcomes[{i}].measure: {outcome['measure']!r} is not a per-session "
                            f"figure the report computes. Fix: one of {', '.join(measures)}.")  # fmt: skip
    measure_of = {o["name"]: o["measure"] for o in plan.get("outcomes", [])}
    controls = control_arm.control_names(study.conditions)
    for i, comparison in enumerate(plan.get("comparisons", [])):
        if comparison["outcome"] not in outcomes:
            problems.append(f"{source}: plan.comparisons[{i}].outcome: no [[plan.outcomes]] is named "
                            f"{comparison['outcome']!r}. Fix: one of {sorted(outcomes)} or add that outcome.")  # fmt: skip
        # A control arm's writers had nothing to ask: its suggestion counts are "not applicable"
        # (blank in exports and releases), so such a comparison would set the assisted arm's
        # figure against a zero nobody measured.
        # Likewise §5.1.3's equality and mutuality: turns shared with the model and interaction
        # with it, which the report leaves "not applicable" for a control arm.
        elif measure_of[comparison["outcome"]] in (*control_arm.SUGGESTION_COLUMNS, *control_arm.COLLABORATION_SCORES):
            why = ("its writers had no model to share turns or interact with"
                   if measure_of[comparison["outcome"]] in control_arm.COLLABORATION_SCORES
                   else "its writers had no suggestions to ask for or accept")  # fmt: skip
            for side in ("treatment", "control"):
                if comparison[side] in controls:
                    problems.append(
                        f"{source}: plan.comparisons[{i}].{side}: {comparison[side]!r} is a control arm "
                        f"(paradigm = \"{control_arm.NO_ASSISTANT}\"), where outcome "
                        f"{comparison['outcome']!r} ({measure_of[comparison['outcome']]}) is not "
                        f"applicable: {why}. Fix: compare "
                        "two assisted arms on it, or compare the control arm on a figure every arm has "
                        "(e.g. writer_share_final, final_words, time)."
                    )  # fmt: skip
        if comparison["treatment"] == comparison["control"]:
            # Its difference is 0 by construction: nothing the study could confirm or refute.
            named = f" ({comparison['name']!r})" if comparison.get("name") else ""
            problems.append(f"{source}: plan.comparisons[{i}]{named}: treatment {comparison['treatment']!r} and "
                            f"control {comparison['control']!r} are the same arm, compared with itself. Fix: "
                            "name two different [[conditions]] as treatment and control.")  # fmt: skip
        for side in ("treatment", "control"):
            if comparison[side] not in names:
                problems.append(f"{source}: plan.comparisons[{i}].{side}: no condition is named "
                                f"{comparison[side]!r}. Fix: one of {sorted(names)}.")  # fmt: skip
    problems += exclude.check(study, plan.get("exclude", []), measures, str(source))
    if not plan.get("comparisons"):
        problems.append(f"{source}: plan: no [[plan.comparisons]]. Fix: declare the comparisons the study "
                        "is run for (outcome, treatment, control); see README, Preregistration.")  # fmt: skip
    if problems:
        raise PlanError("\n".join(problems))
    return plan


def build(study: Study, now: dt.datetime | None = None) -> dict:
    plan = check_plan(study)
    now = now or dt.datetime.now(dt.timezone.utc)
    return {
        "format": FORMAT,
        "study": {"id": study.id, "name": study.name, "title": study.title},
        "recorded_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "config_sha256": hashlib.sha256((study.directory / CONFIG_NAME).read_bytes()).hexdigest(),
        "configuration": configuration(study),
        "arms": arms(study),
        "plan": {"hypotheses": plan.get("hypotheses", ""), "exclusions": plan.get("exclusions", ""),
                 "outcomes": plan.get("outcomes", []), "comparisons": plan.get("comparisons", []),
                 # The rules the report applies (study.plan.exclude); a plan without any
                 # records what it recorded before rules existed.
                 **({"exclude": plan["exclude"]} if plan.get("exclude") else {})},
        "texts_sha256": texts_sha256(study),
        "surveys": surveys(study),
        "files": files(study),
    }  # fmt: skip


def files(study: Study) -> dict[str, dict]:
    """What every other file study.toml names holds as participants get it (study.plan.files)."""
    try:
        return plan_files.named_files(study)
    except (OSError, UnicodeDecodeError, ValueError) as error:  # ConfigError is a ValueError
        raise PlanError(f"{study.directory / CONFIG_NAME}: a file it names cannot be recorded: {error}") from None


def texts_sha256(study: Study) -> dict[str, str]:
    """The SHA-256 of each text participants read, by its [texts] key: study.toml names only the
    files, so a text rewritten after the record is found by its digest (study.plan.deviations)."""
    texts = {"consent": study.consent_template, "instructions": study.instructions_template}
    return {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in texts.items()}


def surveys(study: Study) -> list[dict]:
    """Every survey as participants are asked it, in order, its items in order: a survey's
    preset or file (study.toml names only the file) merged in, so a question reworded there
    after the record is a deviation naming the survey, the item and the key (study.plan.changes)."""
    asked = []
    for survey in study.surveys:
        fields = {f.name: getattr(survey, f.name) for f in dataclasses.fields(survey) if f.name != "raw"}
        fields["items"] = [dataclasses.asdict(item) for item in survey.items]
        if not survey.arms:
            # Every arm, as before `arms` existed: a record made then holds no such key, and
            # should not read as changed.
            del fields["arms"]
        asked.append(json.loads(json.dumps(fields)))  # tuples as the JSON record holds them
    return asked


def key(directory: Path) -> Ed25519PrivateKey:
    """The study's signing key, made on first use (mode 600)."""
    path = directory / KEY_NAME
    if path.exists():
        try:
            loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
        except ValueError as error:
            raise PlanError(f"{path}: not an Ed25519 key ({error}). Fix: restore it from your backup.") from None
        if not isinstance(loaded, Ed25519PrivateKey):
            raise PlanError(f"{path}: not an Ed25519 key. Fix: restore it from your backup.")
        return loaded
    made = Ed25519PrivateKey.generate()
    pem = made.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())  # fmt: skip
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
    return made


def public_text(private: Ed25519PrivateKey) -> str:
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def sign(record: dict, private: Ed25519PrivateKey) -> dict:
    signature = private.sign(canonical(record))
    return {**record, "signature": {"algorithm": "Ed25519", "public_key": public_text(private),
                                    "value": signature.hex()}}  # fmt: skip


def digest(signed: dict) -> str:
    return hashlib.sha256(canonical(signed)).hexdigest()


def write(directory: Path, signed: dict) -> Path:
    """Written whole or not at all: a temporary file renamed into place."""
    path = directory / RECORD_NAME
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(signed, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


@dataclasses.dataclass(frozen=True)
class Earlier:
    """A record already in the study's folder: when it was made and the SHA-256 printed then."""

    recorded_at: str
    sha256: str


def earlier(directory: Path) -> Earlier | None:
    """The record `study preregister` would replace, or None. One that cannot be read is named
    by its file's time and the SHA-256 of its bytes: it is kept all the same."""
    path = directory / RECORD_NAME
    if not path.is_file():
        return None
    try:
        signed = load(path)
        return Earlier(str(signed["recorded_at"]), digest(signed))
    except (PlanError, KeyError):
        modified = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
        return Earlier(modified.strftime("%Y-%m-%dT%H:%M:%SZ"), hashlib.sha256(path.read_bytes()).hexdigest())


def set_aside(directory: Path, replaced: Earlier) -> Path:
    """Copy the record about to be replaced, byte for byte, to
    preregistration.replaced-<its time>.json beside it, never over another (a digest deposited
    with OSF must keep matching a file). Only preregistration.json is the study's record: verify,
    the report and a release read that one alone."""
    stamp = replaced.recorded_at.replace("-", "").replace(":", "")  # no ':' in a file name (Windows, macOS)
    content = (directory / RECORD_NAME).read_bytes()
    for attempt in range(1, 1000):
        suffix = "" if attempt == 1 else f"-{attempt}"
        kept = directory / f"{Path(RECORD_NAME).stem}.replaced-{stamp}{suffix}.json"
        try:
            descriptor = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        return kept
    raise PlanError(f"{directory}: 999 replaced records of {replaced.recorded_at} already; nothing was written.")


def load(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{path}: no preregistration record. Fix: study preregister {path.parent}") from None
    except json.JSONDecodeError as error:
        raise PlanError(f"{path} line {error.lineno}: not JSON ({error.msg}); the record was changed by hand.") from None
    if not isinstance(value, dict) or value.get("format") != FORMAT or "signature" not in value:
        raise PlanError(f"{path}: not a {FORMAT} record.")
    return value


def checked(directory: Path) -> dict:
    """The record in `directory`, its signature checked (and by the study's own key, while
    DIR/preregistration.key is there); PlanError when it cannot be trusted."""
    signed = load(directory / RECORD_NAME)
    expected = public_text(key(directory)) if (directory / KEY_NAME).exists() else None
    verify(signed, expected_key=expected)
    return signed


def verify(signed: dict, *, expected_key: str | None = None) -> None:
    """Raise PlanError unless the signature holds (and is by `expected_key`, when given)."""
    signature = signed["signature"]
    record = {k: v for k, v in signed.items() if k != "signature"}
    try:
        public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(signature["public_key"]))
        public.verify(bytes.fromhex(signature["value"]), canonical(record))
    except (InvalidSignature, ValueError, KeyError, TypeError):
        raise PlanError("the preregistration record's signature does not match its content: "
                        "it was changed after it was signed.") from None  # fmt: skip
    if expected_key is not None and expected_key != signature["public_key"]:
        raise PlanError(f"the record is signed with another key than {KEY_NAME} holds.")
