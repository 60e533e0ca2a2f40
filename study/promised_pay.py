"""What the consent page promises when `[study] pay` is written in words ("$2.50 plus a $1.00
bonus for the best stories"): its first amount of money. `study mturk post` and `study prolific
draft` refuse a reward other than it (study.mturk.posting, study.prolific.settings)."""

from __future__ import annotations

import re
from decimal import Decimal


def first_amount(pay: str, symbols: str = "$£") -> tuple[str, Decimal] | None:
    """The first amount written after one of `symbols` in `pay`, with its symbol; None when
    there is none."""
    named = re.search(rf"([{re.escape(symbols)}])\s*(\d+(?:\.\d{{1,2}})?)(?!\.?\d)", pay)
    return (named.group(1), Decimal(named.group(2))) if named else None
