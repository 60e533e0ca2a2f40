// The editor page's plugin interface: how a paradigm's script takes part in the core's editor
// page (editor.js) without the core naming it. Loaded after editor-events.js and
// editor-outbox.js and before the session's paradigms' scripts (templates/writing.html).
//
// A paradigm's script registers a part:
//
//   StudyEditor.register({ name, start(boot, page, restored) { ... return hooks or null; } });
//
// editor.js starts the registered parts once the session's starting point is known, in the
// order they registered (the paradigms' order in the registry, then their scripts' order).
// `start` gets the page's boot data (every answering paradigm's part of it; a part returns null
// when its own is not there), the `page` (below) and `restored`: {saved} (this browser's copy),
// {server} (the server's /state answer) or {} (a new session), to take back its memory from.
//
// `page`, what a part may use of the editor:
//   textarea, log (StudyEditor.EventLog: suggestionIndex and hoverIndex, the record's
//   persisting fields), record(eventName, eventSource, details), say(message, tone) (the status
//   line), announce(message) (said to a screen reader only: what the part shows by other means,
//   a suggestion drawn over the text, a highlighted item), tone()
//   (the status line's tone), busy(on) (the spinner), finishing() (the finish flow is under
//   way), closed() (finishing, or another tab took the session: nothing more may be logged),
//   save() (the saved copy, after the part's memory changed), insert(text, details) (text
//   appended at the end, as CoAuthor does with an accepted suggestion, paper §4.2.3, logged as
//   an api text-insert with `details` added; false, and nothing in, when tooMuch refuses it),
//   tooMuch(text) (why appending `text` would take the text past what the log or the finish
//   takes, worded for the writer, or null: ask before logging an accept), keepCaretInView().
//
// Hooks a started part may return, each optional; editor.js calls them in the parts' order:
//   onKeyDown(event) -> true when the part handled the key (nothing else sees it); parts whose
//     hooks say `keysFirst` are asked before the others (what covers the text takes its keys);
//   onText(delta, before): after the writer's edit is logged; onCursor(): after a caret move;
//   takePaste() -> details to add to the record of the writer's next edit, or null;
//   memory() -> {key: value}: what the saved copy keeps with the text (merged into it);
//   windowSwitches: "own" (the part logs window-blur/focus itself) or "page" (the page should);
//   onClose(): another tab took the session; stop(): the writer pressed Finish.
//
// And StudyEditor.offeredTexts: a part pushes every text it shows the writer, so the paste
// guard (editor-paste.js) lets that text be pasted back in.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  StudyEditor.parts = [];
  // Texts a part offered the writer (its replies, its suggestions; it pushes each one it
  // shows): pasting one back is not pasting from outside (editor-paste.js).
  StudyEditor.offeredTexts = [];
  StudyEditor.register = function (part) {
    StudyEditor.parts.push(part);
  };
})(window.StudyEditor);
