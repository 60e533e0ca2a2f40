"""A real session with a pasted image, as Quill logs one: an embed insert in the middle of it.

The public CoAuthor release has such a session: `{"insert": {"image": "data:image/png;base64,
..."}}`, a pasted PNG of a few hundred kilobytes. Quill counts an embed as one character, so
every later delta of the session counts it too. `with_pasted_image` pastes one into a real
session mid-way and rewrites every later event as Quill would have logged it with the image
in place: retains and deletes that cross it grow by one, cursors after it move by one, and
eventNum is renumbered. Replaying the result gives the original text with the image in it.
"""

from __future__ import annotations

import base64
import copy
import random
import struct
import zlib

from study.curation.replay import is_embed, replay, to_units


def png(width: int = 360, height: int = 270, seed: int = 11) -> bytes:
    """A real PNG (8-bit RGB) of noise, which does not compress: about 3 bytes per pixel."""
    noise = random.Random(seed)
    rows = b"".join(b"\x00" + noise.randbytes(3 * width) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def image_embed(data: bytes | None = None) -> dict:
    """The insert Quill logs for a pasted PNG."""
    encoded = base64.b64encode(png() if data is None else data).decode("ascii")
    return {"image": f"data:image/png;base64,{encoded}"}


def _length(value: object) -> int:
    return 1 if is_embed(value) else len(to_units(value))


def _merge(ops: list[dict]) -> list[dict]:
    """Adjacent plain retains (no attributes) as one, as Quill writes them."""
    out: list[dict] = []
    for op in ops:
        if out and set(op) == {"retain"} and set(out[-1]) == {"retain"}:
            out[-1] = {"retain": out[-1]["retain"] + op["retain"]}
        else:
            out.append(op)
    return out


def shift_delta(ops: list[dict], image: int) -> tuple[list[dict], int]:
    """One later delta, written for the text without the image, for the text with the image
    before character `image`. Returns the ops and where the image is after them (counted in
    characters other than the image). Text inserted at the image goes before it."""
    out: list[dict] = []
    position, passed, after = 0, False, image
    for op in ops:
        if "insert" in op:
            out.append(op)
            if not passed and position <= image:
                after += _length(op["insert"])
            continue
        key = "retain" if "retain" in op else "delete"
        count = op[key]
        if not passed and position <= image < position + count:  # crosses the image
            before = image - position
            if before:
                out.append({**op, key: before})
            out.append({"retain": 1})
            out.append({**op, key: count - before})
            passed = True
            if key == "delete":
                after -= before
        else:
            out.append(op)
            if key == "delete" and not passed:
                after -= count
        position += count
    return _merge(out), after


def _moved(index: int, image: int) -> int:
    return index + 1 if index > image else index


def with_pasted_image(events: list[dict], embed: dict | None = None) -> tuple[list[dict], int]:
    """`events` with an image pasted at the writer's cursor half-way through the session.

    Returns the new events and the line index of the paste event.
    """
    events = copy.deepcopy(events)
    embed = image_embed() if embed is None else embed
    texts = [i for i, e in enumerate(events) if e["eventName"] == "text-insert" and i > 0]
    after = texts[len(texts) // 2]
    length = len(to_units(replay(events, at=after).text))  # positions are UTF-16 units
    image = min(events[after]["currentCursor"], length - 1)  # before Quill's final newline
    paste = copy.deepcopy(events[after])
    paste.update(
        eventName="text-insert",
        eventSource="user",
        textDelta={"ops": ([{"retain": image}] if image else []) + [{"insert": embed}]},
        cursorRange="",
        currentCursor=image + 1,
    )
    for event in events[after + 1 :]:
        delta = event["textDelta"]
        if delta:
            event["textDelta"] = {**delta, "ops": None}
            event["textDelta"]["ops"], next_image = shift_delta(delta["ops"], image)
        else:
            next_image = image
        event["currentCursor"] = _moved(event["currentCursor"], next_image)
        span = event["cursorRange"]
        if span:
            start, end = span["index"], span["index"] + span["length"]
            start, end = _moved(start, next_image), _moved(end, next_image)
            event["cursorRange"] = {"index": start, "length": end - start}
        image = next_image
    events.insert(after + 1, paste)
    if "eventNum" in events[0]:
        for number, event in enumerate(events):
            event["eventNum"] = number
    return events, after + 1
