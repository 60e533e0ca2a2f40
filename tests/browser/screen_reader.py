"""What a screen reader is told: the text of the page's live regions, as Chromium's own
accessibility tree has them (the tree a screen reader reads, over the DevTools protocol).

Text drawn but hidden from assistive technology (aria-hidden, display: none) is not in the
tree; text that is in the tree but in no live region is there to be found, not said when it
appears."""

from __future__ import annotations

import time

from playwright.sync_api import Page


def live_text(page: Page) -> str:
    """The text inside the live regions (aria-live polite or assertive, role status, alert,
    log...) that the accessibility tree holds now, joined by newlines."""
    client = page.context.new_cdp_session(page)
    try:
        client.send("Accessibility.enable")
        nodes = client.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        client.detach()
    by_id = {node["nodeId"]: node for node in nodes}

    def live(node) -> bool:
        for prop in node.get("properties", []):
            if prop["name"] == "live" and prop["value"]["value"] in ("polite", "assertive"):
                return True
        return False

    def in_live_region(node) -> bool:
        while node is not None:
            if live(node):
                return True
            node = by_id.get(node.get("parentId"))
        return False

    said = []
    for node in nodes:
        if node.get("ignored") or node.get("role", {}).get("value") != "StaticText":
            continue
        if in_live_region(node):
            said.append(node.get("name", {}).get("value", ""))
    return "\n".join(said)


def wait_said(page: Page, words: str, timeout: float = 10.0) -> str:
    """Until a live region holds `words`; returns what the live regions hold then."""
    deadline = time.monotonic() + timeout
    while True:
        said = live_text(page)
        if words in said:
            return said
        if time.monotonic() > deadline:
            raise AssertionError(f"a screen reader was never told {words!r}; the live regions hold {said!r}")
        time.sleep(0.1)
