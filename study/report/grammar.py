"""Grammaticality (CoAuthor section 5.1.1, Figure 4a): why the report does not compute it.

The paper counted "spelling and grammar errors across sentences using LanguageTool", per word.
LanguageTool is a Java program (about 200 MB with its English rules) that its Python wrappers
download from languagetool.org on first use; no PyPI, Debian or npm package ships it, and this
toolkit fetches nothing from elsewhere at run time. A figure from a different checker (a spell
checker alone, say) would not be comparable with the paper's, so the report states that the
analysis is unavailable rather than print a number that looks like the paper's and is not.
"""

from __future__ import annotations

UNAVAILABLE = (
    "Not computed. The paper counted spelling and grammar errors per word with LanguageTool, a "
    "Java program that is downloaded from languagetool.org on first use and is shipped by no "
    "package this toolkit can install offline. A different checker would give figures that "
    "cannot be compared with the paper's (0.037 errors per word for writers, 0.033 for GPT-3, "
    "0.032 for both), so none is used."
)
