// The writing page: a plain textarea whose every change and caret move is logged as a CoAuthor
// 2021 event (paper Table 1), the minimum-time timer and the finish button.
//
// Loaded last, after editor-events.js (records, deltas), editor-outbox.js (saving and sending),
// editor-parts.js (the plugin interface), the session's paradigms' scripts (templates/
// writing.html), editor-paste.js, editor-status.js (the status line, what a screen reader is
// told, the save state), editor-start.js (where the session stands) and editor-finish.js (the
// timer, finishing). What a paradigm adds to the page (a suggestion list, text shown over the
// writer's, a panel) is a part its script registered (editor-parts.js says what a part gets and
// what it may return); this file names none of them. The logged document is the textarea's value
// plus a final "\n", as in Quill, which CoAuthor used; cursor indices are the textarea's indices.
"use strict";

(function (StudyEditor) {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const textarea = document.getElementById("editor");
  const statusLine = document.getElementById("status");
  const saveState = document.getElementById("save-state");
  const spinner = document.querySelector("[data-testid=spinner]");
  const timerLabel = document.getElementById("timer");
  const finishButton = document.getElementById("finish");
  const announcer = document.getElementById("announce");
  const MODIFIER_KEYS = new Set(["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock", "Fn"]);
  const LEAVE_HINT = "Press Tab to leave the text (to the Finish button).";

  let log = null;        // StudyEditor.EventLog, once the starting point is known
  let outbox = null;     // StudyEditor.Outbox
  let hooks = [];        // what each started part returned (editor-parts.js), in their order
  let keyHooks = [];     // those with onKeyDown, the keysFirst ones first
  let shadow = "";       // the value the last logged event left, to diff the next input against
  let lastRange = { index: 0, length: 0 };  // the selection the last logged event left
  let finishing = false;
  let mouseSelecting = false;
  let inserting = false;      // page.insert is putting a part's text in (its own record)
  let selectedBefore = null;  // the selection an edit replaces, taken just before it (beforeinput)
  let leaving = false;        // Esc with nothing to hide: the next Tab leaves the text (onKeyDown)

  const documentText = () => textarea.value + "\n";
  const caret = () => textarea.selectionStart;
  const selection = () => ({
    index: textarea.selectionStart, length: textarea.selectionEnd - textarea.selectionStart,
  });

  // -- status line (editor-status.js) -----------------------------------------------------------

  const { say, announce, showSaveState } = StudyEditor.statusLine({ statusLine, saveState, announcer });

  // -- logging -----------------------------------------------------------------------------------

  function record(eventName, eventSource, details) {
    if (outbox.full) return;  // the session stores no more (atLimit): nothing is numbered
    // While an input method composes, the caret is among letters no event has logged yet (a
    // list that opens meanwhile): the record has the caret the log left, inside its text.
    const at = textarea.value === shadow ? caret() : lastRange.index;
    outbox.add(log.make(eventName, eventSource, at, details));
  }

  // The text and caret the log holds (`shadow`, `lastRange`), not the textarea's: while an
  // input method composes, the textarea holds letters no event has logged yet ("wom" before it
  // becomes "我们"); a copy restored with them would show text no event replays to, and the
  // server would refuse every later edit as editing a text it never had.
  function snapshot() {
    return {
      nextSeq: log.nextSeq,
      doc: shadow + "\n",
      cursor: lastRange,
      suggestionIndex: log.suggestionIndex,
      hoverIndex: log.hoverIndex,
      ...Object.assign({}, ...hooks.map((part) => (part.memory ? part.memory() : {}))),
    };
  }

  // -- text and cursor -------------------------------------------------------------------------

  // An input method's composition ("women" becoming "我们") is logged once, when it ends, as
  // the text it committed: the document never held the letters typed to compose it, and the
  // writer's share of the text (metadata written_by_human) would count them. Chromium's last
  // input event of a composition still says isComposing; its compositionend comes after it.
  function onInput(event) {
    if (inserting) return;  // page.insert logs its own text
    if (event && event.isComposing) return;
    const before = shadow;
    const delta = StudyEditor.diff(shadow, textarea.value, textarea.selectionEnd, selectedBefore);
    selectedBefore = null;
    if (!delta) return;
    // What a part adds to the writer's own edit (e.g. that it was pasted from a reply).
    const added = hooks.map((part) => (part.takePaste ? part.takePaste() : null)).find(Boolean);
    const refusal = StudyEditor.tooMuch(delta, before, textarea.value, textLimits());
    if (refusal) {
      setText(before, lastRange);  // back to the text the log holds
      say(refusal, "error");
      return;
    }
    shadow = textarea.value;
    lastRange = selection();
    const inserts = delta.ops.some((op) => op.insert !== undefined);
    record(inserts ? "text-insert" : "text-delete", "user", added ? { textDelta: delta, ...added } : { textDelta: delta });
    for (const part of hooks) if (part.onText) part.onText(delta, before);
  }

  // The edits the text takes (StudyEditor.tooMuch). The finish's text has the final "\n"
  // (documentText) the textarea has not.
  const textLimits = () => ({ maxInsert: boot.maxInsert, maxText: boot.maxText - 1 });

  // Why `text` appended by a part (an accepted suggestion) cannot go in, or null: the limits
  // of the writer's own edits hold for it too, or the log or the finish would refuse it.
  function tooMuchToAppend(text) {
    const before = textarea.value;
    return StudyEditor.tooMuch(StudyEditor.append(before, text), before, before + text, textLimits());
  }

  // A caret move by keys or mouse, not by typing (onInput already took the caret along). None
  // once Finish is pressed: the finish names the last event sent, and a move after it would be
  // numbered and left behind. A finish refused logs the move at the next one.
  function checkCursor() {
    if (!log || finishing || mouseSelecting || textarea.value !== shadow) return;
    const range = selection();
    if (range.index === lastRange.index && range.length === lastRange.length) return;
    const name = range.length > 0 ? "cursor-select"
      : range.index >= lastRange.index ? "cursor-forward" : "cursor-backward";
    lastRange = range;
    record(name, "user", { cursorRange: range });
    for (const part of hooks) if (part.onCursor) part.onCursor();
  }

  function setSpinner(on) {
    spinner.hidden = !on;
    textarea.setAttribute("aria-busy", on ? "true" : "false");
  }

  // Setting the value from script does not scroll; the caret is at the end here.
  function keepCaretInView() {
    if (textarea.selectionEnd === textarea.value.length) textarea.scrollTop = textarea.scrollHeight;
  }

  // Keys go to the started parts first (keysFirst before the others); Tab is claimed in every
  // arm, so a writer with no suggestions does not leave the text by it. Esc that no part used
  // (nothing shown to hide) lets the next Tab or Shift+Tab move the focus on, as in a code
  // editor: a writer without a mouse must still reach the finish button (and a panel's box).
  function onKeyDown(event) {
    mouseSelecting = false;
    if (event.isComposing || !log) return;
    if (event.key === "Tab" && leaving) {
      stayInText();
      return;
    }
    if (!MODIFIER_KEYS.has(event.key)) stayInText();
    for (const part of keyHooks) if (part.onKeyDown(event)) return;
    if (event.key === "Escape") {
      leaving = true;
      if (!statusLine.textContent) say(LEAVE_HINT);  // never over a message of the page's
    }
    if (event.key === "Tab") event.preventDefault();
  }

  function stayInText() {
    if (leaving && statusLine.textContent === LEAVE_HINT) say("");
    leaving = false;
  }

  // -- starting point --------------------------------------------------------------------------

  function setText(text, range) {
    textarea.value = text;
    const index = Math.min(range ? range.index : text.length, text.length);
    const end = Math.min(index + (range ? range.length : 0), text.length);
    textarea.setSelectionRange(index, end);
    shadow = textarea.value;
    lastRange = selection();
  }

  // Where this session stands (editor-start.js): this browser's copy needs no request, so a page
  // that has one begins at once.
  async function start() {
    const point = StudyEditor.savedStart(boot) || await StudyEditor.serverStart(boot, say);
    begin(point);
    if (point.fresh) record("system-initialize", "api", { currentDoc: documentText() });
    // Once the page is ready, whose start clears the status line (editor-finish.js).
    StudyEditor.startSubmitClock(boot, document.getElementById("submit-clock"), say);
  }

  // `point`: a starting point (editor-start.js).
  function begin(point) {
    // boot.extension: every record carries the extension of the CoAuthor record (EventLog).
    log = new StudyEditor.EventLog(boot.controls, point.nextSeq, point.indices, boot.extension);
    outbox = new StudyEditor.Outbox(boot.sessionId, boot.eventsUrl, point.pending, {
      onState: showSaveState,
      onClosed: (message) => {
        showSaveState("error");
        closePage(`Your latest changes were not saved: ${message}.`);
      },
      onFull: atLimit,
    });
    outbox.snapshot = snapshot;
    setText(StudyEditor.withoutFinalNewline(point.doc), point.cursor);
    outbox.save();
    outbox.schedule(0);
    if (boot.outsidePaste) StudyEditor.guardPastes(textarea, boot.outsidePaste, say);
    textarea.readOnly = false;
    textarea.focus();
    keepCaretInView();
    say("");
    claimTab();
    const page = pageForParts();
    hooks = StudyEditor.parts.map((part) => part.start(boot, page, point.restored)).filter(Boolean);
    const withKeys = hooks.filter((part) => part.onKeyDown);
    keyHooks = [...withKeys.filter((part) => part.keysFirst), ...withKeys.filter((part) => !part.keysFirst)];
    // A reload of a session that has stored all it may: said at once, not at the first edit.
    if (boot.full) outbox.isFull(boot.full, boot.storedNextSeq);
    if (hooks.some((part) => part.memory)) outbox.save();  // the saved copy holds their memory from the start
    const switches = hooks.map((part) => part.windowSwitches);
    if (!switches.includes("own") && (switches.includes("page") || boot.outsidePaste)) {
      // Window switches (MindCopilot Table 5) for a part that asks the page to log them; a
      // study watching pastes from outside logs them too (a paste right after one).
      for (const name of ["blur", "focus"]) {
        window.addEventListener(name, () => { if (!finishing && !outbox.closed) record(`window-${name}`, "user", {}); });
      }
    }
  }

  // What a paradigm's part may do on this page (editor-parts.js).
  function pageForParts() {
    return {
      textarea,
      log,
      record,
      say,
      announce,
      tone: () => statusLine.dataset.tone,
      busy: setSpinner,
      finishing: () => finishing,
      closed: () => finishing || (outbox !== null && (outbox.closed || Boolean(outbox.full))),
      save: () => outbox.save(),
      keepCaretInView,
      // The caret to the end of the text, logged as an api cursor-forward as CoAuthor did when
      // Tab asked (29 of the shared sample's 30 follow a suggestion-get): num_cursor counts it.
      caretToEnd() {
        const end = textarea.value.length;
        if (textarea.value !== shadow || (lastRange.index === end && lastRange.length === 0)) return;
        textarea.setSelectionRange(end, end);
        lastRange = selection();
        record("cursor-forward", "api", { cursorRange: lastRange });
        keepCaretInView();
      },
      tooMuch: tooMuchToAppend,
      insert(text, details = {}) {
        const refusal = tooMuchToAppend(text);
        if (refusal) {  // a part that did not ask page.tooMuch first
          say(refusal, "error");
          return false;
        }
        const before = textarea.value;
        // As an edit of the textarea, so Ctrl+Z takes it back like typing (Quill's history,
        // CoAuthor's editor, does); setting the value would empty the browser's undo history.
        // Its input event is this record, not the writer's: onInput lets it pass.
        textarea.setSelectionRange(before.length, before.length);
        inserting = true;
        try {
          if (document.activeElement !== textarea) textarea.focus();
          if (!document.execCommand("insertText", false, text)) textarea.value = before + text;
        } finally {
          inserting = false;
        }
        textarea.setSelectionRange(textarea.value.length, textarea.value.length);
        shadow = textarea.value;
        lastRange = selection();
        record("text-insert", "api", { textDelta: StudyEditor.append(before, text), ...details });
        keepCaretInView();
        return true;
      },
    };
  }

  // Two tabs on one session would number their events alike. The newest tab wins; the others
  // stop writing and saving (StudyEditor.claimTab).
  function claimTab() {
    StudyEditor.claimTab(boot.sessionId, () => {
      if (finishing) return;
      outbox.closed = true;
      closePage("This session is open in another tab or window; please continue writing there.");
    });
  }

  // Nothing more is logged or sent from this page (`outbox.closed`): the writer is told why.
  function closePage(message) {
    for (const part of hooks) if (part.onClose) part.onClose();
    textarea.readOnly = true;
    finishButton.disabled = true;
    say(message, "error");
  }

  // The session has stored all it may ([session] max_events, max_bytes; Outbox.reachedLimit):
  // the text stops where the server's copy stops, the log with it, and the writer finishes
  // with that. The edits after it were never stored; the text shown and submitted is the one
  // the log replays to.
  async function atLimit(message) {
    for (const part of hooks) if (part.onClose) part.onClose();
    textarea.readOnly = true;
    say("Saving your text…");
    const state = await StudyEditor.serverState(boot.stateUrl, say);
    setText(StudyEditor.withoutFinalNewline(state.doc ?? boot.prompt));
    log.nextSeq = state.next_seq;
    outbox.save();
    keepCaretInView();
    say(`Your session has recorded as much as it can (${message}), so your text can no longer `
      + "change: it is saved as shown. Please press Finish to go on.", "error");
  }

  // -- timer and finish (editor-finish.js) ------------------------------------------------------

  function startTimer() {
    StudyEditor.startTimer(boot, timerLabel, () => {
      finishButton.disabled = finishing || (outbox !== null && outbox.closed);
      // The timer's line changes every second, so it is not a live region; its end is said.
      if (!finishButton.disabled) announce("You may finish now: Esc, then Tab, leaves the text for the Finish button.");
    });
  }

  async function finish() {
    if (finishing || !log) return;
    finishing = true;
    finishButton.disabled = true;
    textarea.readOnly = true;  // a keystroke after the last saved event would be lost
    for (const part of hooks) if (part.stop) part.stop();
    const outcome = await StudyEditor.finishWriting(boot.finishUrl, { outbox, log, documentText, say });
    // Back to writing: the server refused to finish, or refused some of the log (then a page
    // whose outbox has closed stays closed).
    finishing = false;
    const closed = outcome === "log-refused" && outbox.closed;
    textarea.readOnly = closed || Boolean(outbox.full);
    finishButton.disabled = closed;
  }

  // -- wiring ------------------------------------------------------------------------------------

  textarea.readOnly = true;  // until the starting point is known
  // Not while an IME composes: the browser selects the composed text as it changes, which is
  // not a selection the writer made.
  textarea.addEventListener("beforeinput", (event) => { selectedBefore = event.isComposing ? null : selection(); });
  textarea.addEventListener("input", onInput);
  textarea.addEventListener("compositionend", () => onInput());
  textarea.addEventListener("keydown", onKeyDown);
  textarea.addEventListener("keyup", checkCursor);
  textarea.addEventListener("mousedown", () => { mouseSelecting = true; });
  textarea.addEventListener("blur", stayInText);
  document.addEventListener("mouseup", () => {
    if (!mouseSelecting) return;
    mouseSelecting = false;
    checkCursor();
  });
  document.addEventListener("selectionchange", () => {
    if (document.activeElement === textarea) checkCursor();
  });
  finishButton.addEventListener("click", finish);
  window.addEventListener("online", () => outbox && outbox.schedule(0));
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && outbox) outbox.beacon();
  });
  window.addEventListener("pagehide", () => outbox && outbox.beacon());

  startTimer();
  start();
})(window.StudyEditor);
