// The editor's log: CoAuthor 2021 records and the Quill deltas they carry.
//
// Record format: /work/shared/data/coauthor/README.md and schemas/event-batch.schema.json.
// A record has the release's 16 keys in the release's order (eventNum is added at export, from
// `seq`), then `seq`, the browser's per-session sequence number.
// Loaded first, before editor-outbox.js, the paradigms' scripts and editor.js (see writing.html).
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const CONTROL_KEYS = [
    "currentN", "currentMaxToken", "currentTemperature",
    "currentTopP", "currentPresencePenalty", "currentFrequencyPenalty",
  ];

  // -- textDelta: what one `input` event changed --------------------------------------------

  const isHighSurrogate = (code) => code >= 0xd800 && code <= 0xdbff;
  const isLowSurrogate = (code) => code >= 0xdc00 && code <= 0xdfff;

  // Where the old and new text start and stop differing: [prefix, oldEnd, newEnd].
  // `caret` (the selection end after the edit) settles ambiguous cases the way the writer
  // typed them: typing "a" after the first "a" of "aa" is an insert at 1, not at 2.
  // `selected` (the selection before the edit, if any): text typed or pasted over a selection
  // replaces all of it, as Quill logs it (the release: retain, insert "T", delete 9 after a
  // cursor-select of 9), even where the new text starts like the old.
  function changedSpan(before, after, caret, selected) {
    if (selected && selected.length > 0 && caret >= selected.index) {
      const end = selected.index + selected.length;
      if (end <= before.length && before.slice(0, selected.index) === after.slice(0, selected.index)
          && before.slice(end) === after.slice(caret)) {
        return [selected.index, end, caret];
      }
    }
    const grown = after.length - before.length;
    if (grown > 0 && caret >= grown && caret <= after.length) {
      const start = caret - grown;
      if (before.slice(0, start) === after.slice(0, start) && before.slice(start) === after.slice(caret)) {
        return [start, start, caret];
      }
    }
    if (grown < 0 && caret <= after.length) {
      if (before.slice(0, caret) === after.slice(0, caret) && before.slice(caret - grown) === after.slice(caret)) {
        return [caret, caret - grown, caret];
      }
    }
    const shortest = Math.min(before.length, after.length);
    let prefix = 0;
    while (prefix < shortest && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix += 1;
    let suffix = 0;
    while (
      suffix < shortest - prefix &&
      before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)
    ) suffix += 1;
    // Quill counts UTF-16 code units like the textarea; never split an emoji's surrogate pair.
    if (prefix > 0 && isHighSurrogate(after.charCodeAt(prefix - 1))) prefix -= 1;
    if (suffix > 0 && isLowSurrogate(after.charCodeAt(after.length - suffix))) suffix -= 1;
    return [prefix, before.length - suffix, after.length - suffix];
  }

  // The Quill delta turning `before` into `after`, or null when nothing changed. Quill writes
  // retain, insert, delete in that order and leaves out a retain of 0 (an edit at position 0).
  function diff(before, after, caret, selected) {
    if (before === after) return null;
    const [start, oldEnd, newEnd] = changedSpan(before, after, caret, selected);
    const ops = [];
    if (start > 0) ops.push({ retain: start });
    if (newEnd > start) ops.push({ insert: after.slice(start, newEnd) });
    if (oldEnd > start) ops.push({ delete: oldEnd - start });
    return { ops };
  }

  // The delta of an accepted suggestion: appended at the end of the text (paper §4.2.3).
  function append(text, addition) {
    const ops = text.length > 0 ? [{ retain: text.length }] : [];
    ops.push({ insert: addition });
    return { ops };
  }

  // Why an edit (`delta`, turning `before` into `after`) cannot go in a logged text, or null.
  // `limits` are the boot data's (study.server.contract.edit_limits). The event API stores no
  // longer insert: logged, the edit would be refused, and every later one with it, as each edits
  // a text the server never had. The finish takes no longer text (an edit that shortens a text
  // already past it goes in). Either way the writer could never finish.
  function tooMuch(delta, before, after, limits) {
    const long = delta.ops.find((op) => op.insert !== undefined && op.insert.length > limits.maxInsert);
    if (long) {
      return `That is too much text to add at once (${long.insert.length} characters; at most ${limits.maxInsert}): please add it in parts.`;
    }
    if (after.length > limits.maxText && after.length > before.length) {
      return `Your text cannot be longer than ${limits.maxText} characters: this edit would make it ${after.length}.`;
    }
    return null;
  }

  // -- records ---------------------------------------------------------------------------------

  // The suggestion items the schema accepts, whatever the server sent.
  function cleanSuggestions(items) {
    return items.map((item, position) => ({
      index: Number.isInteger(item.index) && item.index >= 0 ? item.index : position,
      original: String(item.original ?? ""),
      trimmed: String(item.trimmed ?? item.original ?? "").trim(),
      probability: typeof item.probability === "number" && Number.isFinite(item.probability)
        ? item.probability : null,
    }));
  }

  // Builds records and numbers them. The two "persisting" fields, currentSuggestionIndex and
  // currentHoverIndex, keep their last value from event to event, as in the release.
  class EventLog {
    constructor(controls, nextSeq, indices, extension) {
      // `extension`: the key every record carries when a paradigm extends the CoAuthor record
      // (its log format's KEY, from the boot data), filled from `details[extension]`; the
      // server fills in what the page is not told (e.g. the writer's condition).
      this.extension = extension || null;
      this.controls = {};
      for (const key of CONTROL_KEYS) this.controls[key] = String(controls[key] ?? "");
      this.nextSeq = nextSeq;
      this.suggestionIndex = indices.suggestionIndex ?? 0;
      this.hoverIndex = indices.hoverIndex ?? "";
    }

    get lastSeq() {
      return this.nextSeq - 1;
    }

    // `details`: textDelta, cursorRange, currentDoc, currentSuggestions, and the extension's
    // key when there is one; `cursor`: the caret.
    make(eventName, eventSource, cursor, details = {}) {
      const record = {
        eventName,
        eventSource,
        eventTimestamp: Date.now(),
        textDelta: details.textDelta || "",
        cursorRange: details.cursorRange || "",
        currentDoc: details.currentDoc || "",
        currentCursor: cursor,
        currentSuggestions: details.currentSuggestions || [],
        currentSuggestionIndex: this.suggestionIndex,
        currentHoverIndex: this.hoverIndex,
      };
      Object.assign(record, this.controls);
      if (this.extension) record[this.extension] = details[this.extension] || {};
      record.seq = this.nextSeq;
      this.nextSeq += 1;
      return record;
    }
  }

  StudyEditor.diff = diff;
  StudyEditor.append = append;
  StudyEditor.tooMuch = tooMuch;
  StudyEditor.cleanSuggestions = cleanSuggestions;
  StudyEditor.EventLog = EventLog;
})(window.StudyEditor);
