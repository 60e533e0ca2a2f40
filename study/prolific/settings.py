"""The [prolific] section of study.toml, as typed settings (README, "Prolific").

schemas/study.schema.json defines the keys; this module reads them from `Study.raw`, so
study.config stays independent of Prolific. Command-line options override them. Money is in
the workspace's currency, written as text ("2.50"), and kept in minor units.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from study.config import Study
from study.prolific import money
from study.prolific.client import is_loopback
from study.promised_pay import first_amount

COMPLETION_URL = "https://app.prolific.com/submissions/complete"
DEVICES = ("desktop", "tablet", "mobile")


class SettingsError(ValueError):
    pass


@dataclass(frozen=True)
class ProlificSettings:
    name: str
    description: str
    reward: int | None = None  # minor units per place
    places: int = 1
    estimated_minutes: int = 20
    maximum_minutes: int | None = None  # Prolific's default: 3 x estimated + 2
    task_url: str = ""
    budget: int | None = None  # minor units, fees included
    # Where a finished participant is sent, with ?cc=<the study's completion code>.
    completion_url: str = COMPLETION_URL
    devices: tuple[str, ...] = ("desktop",)  # writing with Tab needs a keyboard
    once_per_participant: bool = False
    min_ai_requests: int = 1
    min_writer_chars: int = 100

    @property
    def maximum_allowed_minutes(self) -> int:
        """How long a participant may take before Prolific times them out: maximum_minutes, or
        Prolific's default when the draft sends none (3 x estimated + 2, at most a day)."""
        return self.maximum_minutes or min(3 * self.estimated_minutes + 2, 1440)


def from_study(study: Study) -> ProlificSettings:
    section = dict(study.raw.get("prolific", {}))
    where = f"{study.directory / 'study.toml'}: [prolific]"
    mturk = study.raw.get("mturk", {})
    try:
        reward = section.pop("reward", "") or study.pay
        budget = section.pop("budget", "")
        devices = tuple(section.pop("devices", ("desktop",)))
        unknown = [d for d in devices if d not in DEVICES]
        if unknown or not devices:
            raise SettingsError(
                f"{where}.devices: {unknown or 'empty'} is not a list of {', '.join(DEVICES)}. "
                'Fix: e.g. devices = ["desktop"].'
            )
        settings = ProlificSettings(
            name=section.pop("name", study.title),
            description=section.pop(
                "description",
                f"Write with an AI assistant for at least {max(round(study.min_seconds / 60), 1)} "
                "minutes, then answer a short survey.",
            ),
            reward=money.parse(reward, what=f"{where}.reward") if reward else None,
            budget=money.parse(budget, what=f"{where}.budget") if budget else None,
            estimated_minutes=section.pop("estimated_minutes", study.duration_minutes or 20),
            devices=devices,
            # The review rules are the study's, whichever provider: [mturk]'s when [prolific]
            # does not set them.
            min_ai_requests=section.pop("min_ai_requests", mturk.get("min_ai_requests", 1)),
            min_writer_chars=section.pop("min_writer_chars", mturk.get("min_writer_chars", 100)),
            **section,
        )
    except money.MoneyError as error:
        raise SettingsError(f"{error}. Fix: write it as text, e.g. \"2.50\".") from None
    except TypeError as error:
        raise SettingsError(f"{where}: {error}. Fix: see README, Prolific.") from None
    if settings.places < 1:
        raise SettingsError(f"{where}.places must be at least 1, got {settings.places}.")
    if settings.estimated_minutes < 1:
        raise SettingsError(f"{where}.estimated_minutes must be at least 1 minute.")
    return settings


# What the fixes' examples give: a reward per place, and a budget for a whole study.
EXAMPLES = {"reward": 250, "budget": 8000}


def check_currency(study: Study, currency: str, *, reward: bool = False) -> None:
    """The study's amounts written with a symbol must be in the workspace's currency, which only
    Prolific knows (users/me): `study init` writes pay = "$2.50", which would otherwise become
    the reward of a pound workspace as £2.50 while the consent page promises dollars. The
    budget always; the reward (`reward`) where a draft takes it from study.toml."""
    section = study.raw.get("prolific", {})
    path = study.directory / "study.toml"
    written = [(f"{path}: [prolific] budget", section.get("budget"), "budget")]
    if reward and section.get("reward"):
        written.append((f"{path}: [prolific] reward", section["reward"], "reward"))
    elif reward:
        written.append((f"{path}: [study] pay (the reward, since [prolific] sets none)", study.pay,
                        "reward"))  # fmt: skip
    for where, text, key in written:
        found = money.written_currency(text or "")
        if found and found != currency:
            raise SettingsError(
                f"{where} is {text!r}, in {found}, but this Prolific workspace pays in "
                f"{currency}. Fix: set {key} in [prolific] in {currency}, e.g. "
                f'{key} = "{money.as_written(EXAMPLES[key], currency)}"'
                + (", and make [study] pay, which the consent page shows, say the same."
                   if key == "reward" else ".")
            )


def pay_mismatch(study: Study, reward: int, currency: str) -> str | None:
    """What is wrong when the consent page promises other pay than a Prolific study's reward
    (`study mturk post` refuses the same for a HIT): `[study] pay` is what participants are told
    they will receive, so "$2.50" there and a reward of £2.50, or of $2.00, tells them something
    untrue. Pay written in words ("$2.50 and a bonus") agrees when the first amount it names,
    in the workspace's currency, is the reward."""
    if not study.pay:
        return None
    paid = money.show(reward, currency)
    try:
        if money.parse(study.pay, currency=currency) == reward:  # refuses another currency's
            return None
    except money.MoneyError:
        # In words, the first amount named is the promise: "£2.50 plus a £1.00 bonus for the
        # best stories" promises £2.50 for the study, and a reward of £1.00 names the bonus.
        named = first_amount(study.pay)
        if named and named[0] == money.SYMBOLS.get(currency) and money.parse(named[1]) == reward:
            return None
    return (
        f"The consent page promises pay = {study.pay!r} ([study] in "
        f"{study.directory / 'study.toml'}), but the Prolific study would pay {paid} per place "
        f"(this workspace pays in {currency})."
    )


def unreachable(study: Study, settings: ProlificSettings, task_url: str) -> str | None:
    """Why participants on Prolific itself could not take part, or None. A dry run points the
    study at this machine (the task page on 127.0.0.1, the emulator's completion_url); on
    Prolific those addresses are each participant's own computer, so nobody could open the task
    or, worse, come back with the completion code after writing: every submission would time
    out unpaid. Checked on live before a study is drafted or published."""
    where = f"{study.directory / 'study.toml'}: [prolific] completion_url"
    completion = settings.completion_url
    if is_loopback(completion) or urlparse(completion).scheme != "https":
        what = "an address on this machine (a dry run's)" if is_loopback(completion) else "not https"
        return (
            f"{where} is {completion!r}, {what}: on Prolific every participant who finishes would be sent there instead of back to "
            "Prolific with the completion code, and go unpaid. Fix: remove completion_url from "
            f"[prolific] (Prolific's {COMPLETION_URL} is the default), then restart study serve."
        )
    if is_loopback(task_url):
        return (
            f"the study URL {task_url.split('?')[0]!r} is on this machine: participants on "
            "Prolific cannot open it. Fix: draft the study with --task-url (or [prolific] "
            "task_url) set to the task server's public https address, e.g. "
            "https://study.example.org/task."
        )
    return None
