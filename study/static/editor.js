// The writing page: a plain textarea whose every change, caret move and suggestion action is
// logged as a CoAuthor 2021 event (paper Table 1), the minimum-time timer and the finish button.
//
// Loaded last, after editor-events.js (records, deltas), editor-outbox.js (saving and sending),
// the session's paradigms' scripts (templates/writing.html; e.g. the Tab paradigm's
// editor-suggestions.js, request and popup), editor-paste.js and editor-finish.js (the timer,
// finishing). What a paradigm's script defines is called only when its paradigm put its part in
// the boot data (boot.suggestionsUrl, boot.proactive, boot.assistantPanel, boot.chat), so a page
// loads no other paradigm's scripts. The logged document is the textarea's value plus
// a final "\n", as in Quill, which CoAuthor used; cursor indices are the textarea's indices.
"use strict";

(function (StudyEditor) {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const textarea = document.getElementById("editor");
  const statusLine = document.getElementById("status");
  const saveState = document.getElementById("save-state");
  const spinner = document.querySelector("[data-testid=spinner]");
  const timerLabel = document.getElementById("timer");
  const finishButton = document.getElementById("finish");
  const RETRY_STATE_MS = 2000;

  let log = null;        // StudyEditor.EventLog, once the starting point is known
  let outbox = null;     // StudyEditor.Outbox
  let popup = null;      // StudyEditor.Popup; stays null in a control arm (no assistant)
  let proactive = null;  // StudyEditor.Proactive, in the MindCopilot paradigms L1-L3
  let assistant = null;  // StudyEditor.AssistantPanel, in MindCopilot's L0 (editor-assistant.js)
  let shadow = "";       // the value the last logged event left, to diff the next input against
  let lastRange = { index: 0, length: 0 };  // the selection the last logged event left
  let lastSuggestions = [];  // the last list shown, for Shift+Tab
  let asking = false;    // a suggestion request is under way
  let finishing = false;
  let mouseSelecting = false;

  const documentText = () => textarea.value + "\n";
  const caret = () => textarea.selectionStart;
  const selection = () => ({
    index: textarea.selectionStart, length: textarea.selectionEnd - textarea.selectionStart,
  });

  // -- status line ------------------------------------------------------------------------------

  function say(message, tone = "info") {
    statusLine.textContent = message;
    statusLine.dataset.tone = tone;
  }

  const SAVE_LABELS = {
    saved: "All changes saved",
    saving: "Saving…",
    reconnecting: "Reconnecting… your text is kept in this browser",
    error: "Not saved on the server",
  };

  function showSaveState(state, message) {
    saveState.textContent = SAVE_LABELS[state];
    saveState.dataset.state = state;
    if (message) say(message, "error");
    else if (state === "reconnecting" && !statusLine.textContent) say(SAVE_LABELS.reconnecting, "warn");
    else if (state === "saved" && statusLine.dataset.tone === "warn") say("");
  }

  // -- logging -----------------------------------------------------------------------------------

  function record(eventName, eventSource, details) {
    outbox.add(log.make(eventName, eventSource, caret(), details));
  }

  function snapshot() {
    return {
      nextSeq: log.nextSeq,
      doc: documentText(),
      cursor: selection(),
      suggestionIndex: log.suggestionIndex,
      hoverIndex: log.hoverIndex,
      lastSuggestions,
      proactive: proactive ? proactive.memory() : undefined,
    };
  }

  // -- text and cursor -------------------------------------------------------------------------

  function onInput() {
    const before = shadow;
    const delta = StudyEditor.diff(shadow, textarea.value, textarea.selectionEnd);
    shadow = textarea.value;
    lastRange = selection();
    if (!delta) return;
    const inserts = delta.ops.some((op) => op.insert !== undefined);
    const pasted = assistant ? assistant.takePaste() : null;  // a paste or Insert at cursor
    record(inserts ? "text-insert" : "text-delete", "user", pasted ? { textDelta: delta, proactive: pasted } : { textDelta: delta });
    if (proactive) proactive.onText(delta, before);
  }

  // A caret move by keys or mouse, not by typing (onInput already took the caret along).
  function checkCursor() {
    if (!log || mouseSelecting || textarea.value !== shadow) return;
    const range = selection();
    if (range.index === lastRange.index && range.length === lastRange.length) return;
    const name = range.length > 0 ? "cursor-select"
      : range.index >= lastRange.index ? "cursor-forward" : "cursor-backward";
    lastRange = range;
    record(name, "user", { cursorRange: range });
    if (proactive) proactive.onCursor();
  }

  // -- suggestions -------------------------------------------------------------------------------

  const maxShown = () => parseInt(boot.controls.currentN, 10) || 5;

  function setSpinner(on) {
    spinner.hidden = !on;
    textarea.setAttribute("aria-busy", on ? "true" : "false");
  }

  async function askForSuggestions() {
    if (asking || finishing) return;
    const onScreen = popup.isOpen ? popup.items.map((item) => item.trimmed) : [];
    if (popup.isOpen) dismiss("user");
    asking = true;
    record("suggestion-get", "user");
    setSpinner(true);
    say("");
    // The model continues the writer's text, without Quill's final newline: in the CoAuthor
    // release a suggestion accepted after "." starts with a space, not a new paragraph.
    const answer = await StudyEditor.fetchSuggestions(boot.suggestionsUrl, textarea.value, onScreen);
    asking = false;
    setSpinner(false);
    if (finishing) return;
    const items = answer.suggestions ? StudyEditor.cleanSuggestions(answer.suggestions).slice(0, maxShown()) : [];
    if (items.length === 0) {
      // Not every query is answered by a list (shared data README); the writer is told why.
      record("suggestion-fail", "api");
      say(answer.error
        ? `Could not get suggestions: ${answer.error}. Keep writing, or press Tab to try again.`
        : "No suggestions this time. Keep writing, or press Tab to try again.", "error");
      return;
    }
    lastSuggestions = items;
    log.suggestionIndex = 0;
    record("suggestion-open", "api", { currentSuggestions: items });
    popup.show(items, 0);
    say(`${items.length} suggestions. Up and down arrows to choose, Enter to accept, Esc to hide.`);
  }

  function reopen() {
    if (finishing || lastSuggestions.length === 0) return;
    record("suggestion-reopen", "user");
    popup.show(lastSuggestions, log.suggestionIndex);
  }

  function move(step) {
    popup.highlight(popup.highlighted + step);
    log.suggestionIndex = popup.highlighted;
    record(step < 0 ? "suggestion-up" : "suggestion-down", "user");
  }

  function hover(position) {
    log.hoverIndex = position;
    record("suggestion-hover", "user");
  }

  function dismiss(source) {
    popup.hide();
    record("suggestion-close", source);
    if (statusLine.dataset.tone === "info") say("");
  }

  // Accepting: select (user), close (api), then the text goes at the end (paper §4.2.3).
  function accept(position) {
    const item = popup.items[position];
    if (!item || finishing) return;
    log.suggestionIndex = position;
    record("suggestion-select", "user");
    dismiss("api");
    const before = textarea.value;
    textarea.value = before + item.original;
    textarea.setSelectionRange(textarea.value.length, textarea.value.length);
    shadow = textarea.value;
    lastRange = selection();
    record("text-insert", "api", { textDelta: StudyEditor.append(before, item.original) });
    textarea.focus();
    keepCaretInView();
    say("");
  }

  // Setting the value from script does not scroll; the caret is at the end here.
  function keepCaretInView() {
    if (textarea.selectionEnd === textarea.value.length) textarea.scrollTop = textarea.scrollHeight;
  }

  const MODIFIER_KEYS = new Set(["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock", "Fn"]);

  function onKeyDown(event) {
    mouseSelecting = false;
    if (event.isComposing || !log) return;
    if (proactive && proactive.onKeyDown(event)) return;
    if (event.key === "Tab") {
      // Claimed in every arm, so a writer without an assistant does not leave the text by it.
      event.preventDefault();
      if (!popup) return;
      if (event.shiftKey) reopen();
      else askForSuggestions();
      return;
    }
    if (!popup || !popup.isOpen) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      move(event.key === "ArrowUp" ? -1 : 1);
    } else if (event.key === "Enter") {
      event.preventDefault();
      accept(popup.highlighted);
    } else if (event.key === "Escape") {
      event.preventDefault();
      dismiss("user");
    } else if (!MODIFIER_KEYS.has(event.key)) {
      dismiss("user");  // and the key does what it does: "continues to type" (§4.2.3)
    }
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

  const withoutFinalNewline = (doc) => (doc.endsWith("\n") ? doc.slice(0, -1) : doc);

  // Where this session stands: this browser's copy, else the server's replay of what it
  // stored, else a fresh start. system-initialize is logged only in the last case, so a
  // session has exactly one.
  async function start() {
    const saved = StudyEditor.readSaved(boot.sessionId);
    if (saved) {
      lastSuggestions = saved.lastSuggestions || [];
      begin(saved.nextSeq, saved.pending, saved, () => setText(withoutFinalNewline(saved.doc), saved.cursor), saved.proactive);
      return;
    }
    const state = await serverState();
    if (state.doc !== null && state.doc !== undefined) {
      lastSuggestions = state.last_suggestions || [];
      const indices = { suggestionIndex: state.suggestion_index, hoverIndex: state.hover_index };
      begin(state.next_seq, [], indices, () => setText(withoutFinalNewline(state.doc)), state.proactive);
      return;
    }
    begin(state.next_seq || 0, [], {}, () => setText(withoutFinalNewline(boot.prompt)));
    record("system-initialize", "api", { currentDoc: documentText() });
  }

  async function serverState() {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const response = await fetch(boot.stateUrl, { cache: "no-store" });
        const answer = await response.json().catch(() => null);
        if (response.ok && answer) return answer;
        console.error("editor: cannot load the session's state", response.status, answer);
        say(`Cannot load your session yet (${(answer && answer.error) || `HTTP ${response.status}`}); retrying…`, "warn");
      } catch (error) {
        say("Connecting to the server…", "warn");
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_STATE_MS * attempt, 5000)));
    }
  }

  // `memory`: the proactive interaction memory that goes with the restored text (L2 and L3
  // requests carry it), from the same place as the text: the saved copy or the server.
  function begin(nextSeq, pending, indices, restoreText, memory) {
    log = new StudyEditor.EventLog(boot.controls, nextSeq, indices, boot.extension);
    outbox = new StudyEditor.Outbox(boot.sessionId, boot.eventsUrl, pending, { onState: showSaveState });
    outbox.snapshot = snapshot;
    restoreText();
    outbox.save();
    outbox.schedule(0);
    // A control arm's page has no suggestion list and no suggestions URL (study/control_arm.py).
    if (boot.suggestionsUrl) popup = new StudyEditor.Popup(document.getElementById("suggestions"), textarea, { hover, choose: accept });
    if (boot.outsidePaste) StudyEditor.guardPastes(textarea, boot.outsidePaste, say);
    if (boot.chat) StudyEditor.startChat(boot.chat, say);
    textarea.readOnly = false;
    textarea.focus();
    keepCaretInView();
    say("");
    claimTab();
    if (boot.assistantPanel) {
      const closed = () => finishing || (outbox !== null && outbox.closed);
      assistant = new StudyEditor.AssistantPanel(boot.assistantPanel, { textarea, record, busy: setSpinner, finishing: closed });
    }
    if (boot.proactive) {
      proactive = new StudyEditor.Proactive(boot.proactive, proactivePage(), memory);
      outbox.save();  // the saved copy holds the memory from the start
    } else if (boot.extension || boot.outsidePaste) {
      // L0 of a proactive study: window switches, as editor-proactive.js logs them (Table 5);
      // a study watching pastes from outside logs them too (a paste right after one).
      for (const name of ["blur", "focus"]) {
        window.addEventListener(name, () => { if (!finishing && !outbox.closed) record(`window-${name}`, "user", {}); });
      }
    }
  }

  // What editor-proactive.js may do on this page: log, insert an accepted suggestion at the
  // end (as CoAuthor, paper §4.2.3), show the spinner.
  function proactivePage() {
    return {
      textarea,
      record,
      say,
      busy: setSpinner,
      finishing: () => finishing || (outbox !== null && outbox.closed),
      save: () => outbox.save(),
      insert(text, extension) {
        const before = textarea.value;
        textarea.value = before + text;
        textarea.setSelectionRange(textarea.value.length, textarea.value.length);
        shadow = textarea.value;
        lastRange = selection();
        record("text-insert", "api", { textDelta: StudyEditor.append(before, text), proactive: extension });
        keepCaretInView();
      },
    };
  }

  // Two tabs on one session would number their events alike. The newest tab wins; the others
  // stop writing and saving.
  function claimTab() {
    const tabKey = `${StudyEditor.storageKey(boot.sessionId)}.tab`;
    const tabId = Math.random().toString(36).slice(2);
    try { window.localStorage.setItem(tabKey, tabId); } catch (error) { return; }
    window.addEventListener("storage", (event) => {
      if (event.key !== tabKey || event.newValue === tabId || finishing) return;
      outbox.closed = true;
      if (popup) popup.hide();
      textarea.readOnly = true;
      finishButton.disabled = true;
      say("This session is open in another tab or window; please continue writing there.", "error");
    });
  }

  // -- timer and finish (editor-finish.js) ------------------------------------------------------

  function startTimer() {
    StudyEditor.startTimer(boot, timerLabel, () => {
      finishButton.disabled = finishing || (outbox !== null && outbox.closed);
    });
  }

  async function finish() {
    if (finishing || !log) return;
    finishing = true;
    finishButton.disabled = true;
    textarea.readOnly = true;  // a keystroke after the last saved event would be lost
    if (popup && popup.isOpen) dismiss("user");
    if (proactive) proactive.stop();
    if (assistant) assistant.stop();
    const outcome = await StudyEditor.finishWriting(boot.finishUrl, { outbox, log, documentText, say });
    // Back to writing: the server refused to finish, or refused some of the log (then a page
    // whose outbox has closed stays closed).
    finishing = false;
    const closed = outcome === "log-refused" && outbox.closed;
    textarea.readOnly = closed;
    finishButton.disabled = closed;
  }

  // -- wiring ------------------------------------------------------------------------------------

  textarea.readOnly = true;  // until the starting point is known
  textarea.addEventListener("input", onInput);
  textarea.addEventListener("keydown", onKeyDown);
  textarea.addEventListener("keyup", checkCursor);
  textarea.addEventListener("mousedown", () => { mouseSelecting = true; });
  document.addEventListener("mouseup", () => {
    if (!mouseSelecting) return;
    mouseSelecting = false;
    checkCursor();
  });
  document.addEventListener("selectionchange", () => {
    if (document.activeElement === textarea) checkCursor();
  });
  document.addEventListener("mousedown", (event) => {
    if (popup && popup.isOpen && !popup.list.contains(event.target)) dismiss("user");
  });
  textarea.addEventListener("scroll", () => popup && popup.place());
  window.addEventListener("resize", () => popup && popup.place());
  finishButton.addEventListener("click", finish);
  window.addEventListener("online", () => outbox && outbox.schedule(0));
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && outbox) outbox.beacon();
  });
  window.addEventListener("pagehide", () => outbox && outbox.beacon());

  startTimer();
  start();
})(window.StudyEditor);
