"""Grammaticality (CoAuthor section 5.1.1, Figure 4a): spelling and grammar errors per word of
the final texts' sentences, by who wrote them, counted by LanguageTool as in the paper.

LanguageTool is a Java program that no PyPI, Debian or npm package ships (its Python wrappers
download it from languagetool.org on first use, which this toolkit never does). A researcher
who runs it (its own distribution or container, `languagetool-server` on port 8081) gives its
URL with `study report --languagetool http://localhost:8081`; the report then uses its HTTP API
(POST /v2/check with `text` and `language`, answering `{"matches": [{"offset", "length",
"rule"}]}`, offsets in UTF-16 code units as Java counts them). Without it, the report says the
analysis is unavailable and why: a figure from a different checker (a spell checker alone, say)
would not be comparable with the paper's, so none is substituted.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx

LANGUAGE = "en-US"
PAPER = {"writer": 0.037, "model": 0.033, "both": 0.032}
UNAVAILABLE = (
    "Not computed. The paper counted spelling and grammar errors per word with LanguageTool, a "
    "Java program that is downloaded from languagetool.org on first use and is shipped by no "
    "package this toolkit can install offline. Run a LanguageTool server yourself and pass its "
    "URL with `study report --languagetool http://localhost:8081` to compute it. A different "
    "checker would give figures that cannot be compared with the paper's (0.037 errors per word "
    "for writers, 0.033 for GPT-3, 0.032 for both), so none is used."
)


class LanguageToolError(RuntimeError):
    pass


def check_server(url: str) -> None:
    """Fail early, with the fix, when nothing answers at `url`."""
    try:
        response = httpx.get(f"{url.rstrip('/')}/v2/languages", timeout=10)
        response.raise_for_status()
    except httpx.HTTPError as error:
        raise LanguageToolError(
            f"LanguageTool at {url} does not answer ({error}); start its server or leave out "
            "--languagetool"
        ) from None


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def errors_per_word(sentences: Sequence[tuple[str, str]], url: str) -> list[tuple[str, float]]:
    """(author class, LanguageTool matches per word) for each sentence with words.

    The sentences of a session are checked in one request, one per line; each match counts
    for the sentence its offset falls in.
    """
    kept = [(kind, text) for kind, text in sentences if text.split()]
    if not kept:
        return []
    starts, position = [], 0
    for _, text in kept:
        starts.append(position)
        position += _utf16_length(text) + 1
    try:
        response = httpx.post(f"{url.rstrip('/')}/v2/check", timeout=120,
                              data={"text": "\n".join(t for _, t in kept), "language": LANGUAGE})  # fmt: skip
        response.raise_for_status()
        matches = response.json().get("matches") or []
    except (httpx.HTTPError, ValueError) as error:
        raise LanguageToolError(f"LanguageTool at {url}: {error}") from None
    counts = [0] * len(kept)
    for match in matches:
        offset = match.get("offset")
        if not isinstance(offset, int):
            continue
        sentence = max(i for i, start in enumerate(starts) if start <= offset) if offset >= 0 else 0
        counts[sentence] += 1
    return [(kind, counts[i] / len(text.split())) for i, (kind, text) in enumerate(kept)]
