// What the writing page tells the writer in words: the status line, what a screen reader alone
// is told (templates/writing.html's #announce) and the footer's save state. Loaded before
// editor.js, which makes one of these for its page and hands `say` and `announce` to the parts.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const SAVE_LABELS = {
    saved: "All changes saved",
    saving: "Saving…",
    reconnecting: "Reconnecting… your text is kept in this browser",
    error: "Not saved on the server",
  };

  // `statusLine`, `saveState`, `announcer`: the page's elements for each.
  StudyEditor.statusLine = function ({ statusLine, saveState, announcer }) {
    function say(message, tone = "info") {
      statusLine.textContent = message;
      statusLine.dataset.tone = tone;
    }

    // Said to a screen reader only. Emptied first, so the same words said twice (the same
    // suggestion highlighted again) are read twice; what is said within the same 50 ms (the
    // text saved again as the minimum time ends) is said together.
    let announcing = null;
    let toSay = [];
    function announce(message) {
      clearTimeout(announcing);
      toSay.push(message);
      announcer.textContent = "";
      announcing = setTimeout(() => { announcer.textContent = toSay.join(" "); toSay = []; }, 50);
    }

    // The footer's save state is no live region: it goes "Saving…", "All changes saved" at every
    // pause in the typing, which read aloud would talk over the writer's own reading. What a
    // screen reader is told is what the writer must act on or may stop worrying about: that
    // saving failed (the status line says it, or announce does when that line holds another
    // message), and "All changes saved" once the text is saved again after such a failure.
    let saveTrouble = false;  // "reconnecting" or "error" was shown since the last "saved"
    function showSaveState(state, message) {
      const before = saveState.dataset.state;
      saveState.textContent = SAVE_LABELS[state];
      saveState.dataset.state = state;
      const saidOnStatusLine = Boolean(message) || (state === "reconnecting" && !statusLine.textContent);
      if (message) say(message, "error");
      else if (state === "reconnecting" && !statusLine.textContent) say(SAVE_LABELS.reconnecting, "warn");
      else if (state === "saved" && statusLine.dataset.tone === "warn") say("");
      if (state === "reconnecting" || state === "error") {
        if (state !== before && !saidOnStatusLine) announce(SAVE_LABELS[state]);
        saveTrouble = true;
      } else if (state === "saved" && saveTrouble) {
        saveTrouble = false;
        announce(SAVE_LABELS.saved);
      }
    }

    return { say, announce, showSaveState };
  };
})(window.StudyEditor);
