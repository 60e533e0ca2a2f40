// Where a session stands when its writing page opens: this browser's copy, else the server's
// replay of what it stored, else a fresh start from the prompt. editor.js logs
// system-initialize only in the last case (`fresh`), so a session has exactly one. A copy that
// stops before the server's last event is older than the server's (the writer went on in
// another browser): its next events would take numbers the server already holds, which it
// acknowledges as resends and drops. Loaded before editor.js, which begins from what these say.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const RETRY_STATE_MS = 2000;

  // A starting point: nextSeq, pending (records not yet acknowledged), indices (the log's
  // suggestionIndex and hoverIndex), doc (the text, with the final "\n" of a logged document or
  // without, as the prompt), cursor (or undefined: at the end), restored (where the parts take
  // back their memory from, the same place as the text: {saved} (this browser's copy), {server}
  // (the server's replay) or {} (a new session)) and fresh.

  // This browser's copy, when it is not older than what the server stored; otherwise null. No
  // request: a page with its copy begins at once.
  StudyEditor.savedStart = function (boot) {
    const saved = StudyEditor.readSaved(boot.sessionId);
    if (!(saved && saved.nextSeq >= boot.storedNextSeq)) return null;
    return {
      nextSeq: saved.nextSeq, pending: saved.pending, indices: saved, doc: saved.doc,
      cursor: saved.cursor, restored: { saved }, fresh: false,
    };
  };

  // The server's replay of the session, or a fresh start when it stored no event.
  StudyEditor.serverStart = async function (boot, say) {
    const state = await StudyEditor.serverState(boot.stateUrl, say);
    if (state.doc !== null && state.doc !== undefined) {
      const indices = { suggestionIndex: state.suggestion_index, hoverIndex: state.hover_index };
      return { nextSeq: state.next_seq, pending: [], indices, doc: state.doc, restored: { server: state }, fresh: false };
    }
    return { nextSeq: state.next_seq || 0, pending: [], indices: {}, doc: boot.prompt, restored: {}, fresh: true };
  };

  // The session's state as the server stored it (GET `stateUrl`), asked again until it answers;
  // `say(message, tone)` tells the writer it is waiting.
  StudyEditor.serverState = async function (stateUrl, say) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const response = await fetch(stateUrl, { cache: "no-store" });
        const answer = await response.json().catch(() => null);
        if (response.ok && answer) return answer;
        console.error("editor: cannot load the session's state", response.status, answer);
        say(`Cannot load your session yet (${(answer && answer.error) || `HTTP ${response.status}`}); retrying…`, "warn");
      } catch (error) {
        say("Connecting to the server…", "warn");
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_STATE_MS * attempt, 5000)));
    }
  };

  StudyEditor.withoutFinalNewline = (doc) => (doc.endsWith("\n") ? doc.slice(0, -1) : doc);
})(window.StudyEditor);
