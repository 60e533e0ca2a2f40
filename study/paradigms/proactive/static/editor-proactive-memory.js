// The interaction memory of the proactive paradigms (MindCopilot L2 and L3): the three lists
// their requests carry (README "Proactive co-writing"). `history`: the <accept>, <reject>,
// <del> and <add> items of study.paradigms.proactive.context; `outcomes`: one per suggestion
// shown or stale, oldest first (L3's rejection run); `accepted`: the spans of accepted
// suggestions (L3's kept words, and what a writer's edit inside one modifies). The server
// rebuilds the same lists from the stored events by the same rules
// (study/paradigms/proactive/memory.py): keep both the same. Loaded before editor-proactive.js,
// which keeps one for the session and saves it with the text across reloads.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const wordsIn = (text) => (text.match(/\S+/g) || []).length;

  class ProactiveMemory {
    // `saved`: what saved() returned before a reload (this browser's copy), or the server's
    // rebuild from the stored events, or nothing in a new session.
    constructor(saved) {
      this.accepted = [];        // {id, start, end, at, outcome}
      this.history = [];         // L2's items: {kind, index, length} or {kind, index, text}
      this.outcomes = [];        // per suggestion shown, oldest first (L3's rejection run)
      if (saved) this.restore(saved);
    }

    restore(saved) {
      if (Array.isArray(saved.history)) this.history = saved.history;
      if (Array.isArray(saved.outcomes)) this.outcomes = saved.outcomes;
      if (Array.isArray(saved.accepted)) this.accepted = saved.accepted;
    }

    saved() {
      return { history: this.history, outcomes: this.outcomes, accepted: this.accepted };
    }

    // Suggestions rejected since the last one accepted (L3: study.paradigms.proactive.policy).
    rejectionRun() {
      let run = 0;
      for (let i = this.outcomes.length - 1; i >= 0; i -= 1) {
        if (this.outcomes[i].startsWith("accepted")) break;
        if (this.outcomes[i] === "rejected") run += 1;
      }
      return run;
    }

    // What a request carries of the memory (schemas/api/proactive-request.schema.json), for
    // the writer's `text`: L1 sends no history.
    request(text, stateful) {
      return {
        history: stateful ? this.history : [],
        outcomes: this.outcomes.filter((outcome) => outcome !== "shown"),
        kept_words: this.accepted.map((span) => wordsIn(text.slice(span.start, span.end))),
      };
    }

    // A suggestion shown; settled on close ("accepted", "rejected").
    shown() {
      this.outcomes.push("shown");
    }

    // An answer that came after the writer moved on, never shown.
    stale() {
      this.outcomes.push("stale");
    }

    settle(outcome, as) {
      this.outcomes[outcome] = as;
    }

    // `length` characters of suggestion `current` ({id, outcome}) put in at `start`: its
    // accepted span and <accept> item begin, or grow when a word is taken after the last.
    took(current, start, length) {
      const span = this.accepted.find((s) => s.id === current.id && s.end === start);
      if (span) span.end += length;
      else this.accepted.push({ id: current.id, start, end: start + length, at: Date.now(), outcome: current.outcome });
      const item = this.history.find((h) => h.kind === "accept" && h.id === current.id);
      if (item) item.length += length;
      else this.history.push({ kind: "accept", index: start, length, id: current.id });
    }

    // A suggestion rejected with none of it taken: <reject> holds its text where it was shown.
    rejected(current) {
      this.history.push({ kind: "reject", index: current.anchor, text: current.text });
    }

    // One edit of the writer's (`gone`: the text it deleted): every span and anchor is mapped
    // through it, then it adds to <del> / <add>. An accepted span it touched within
    // `windowMs` of its acceptance (0: ever) is modified: `onModified(span)` after its outcome
    // is marked.
    edited(position, inserted, deleted, gone, windowMs, onModified) {
      const now = Date.now();
      for (const span of this.accepted) {
        const mapped = StudyEditor.mapSpan(span, position, inserted, deleted);
        span.start = mapped.start;
        span.end = mapped.end;
        if (mapped.touched && (windowMs === 0 || now - span.at <= windowMs)) {
          this.outcomes[span.outcome] = "accepted_modified";
          onModified(span);
        }
      }
      this.accepted = this.accepted.filter((span) => span.end > span.start);
      for (const item of this.history) {
        if (item.text !== undefined) {
          item.index = StudyEditor.mapPoint(item.index, position, inserted, deleted);
        } else {
          const mapped = StudyEditor.mapSpan({ start: item.index, end: item.index + item.length }, position, inserted, deleted);
          item.index = mapped.start;
          item.length = mapped.end - mapped.start;
        }
      }
      this.history = this.history.filter((item) => item.text !== undefined || item.length > 0);
      const last = this.history[this.history.length - 1];
      if (deleted) {
        if (last && last.kind === "del" && last.index === position) last.text = gone + last.text;
        else this.history.push({ kind: "del", index: position, text: gone });
      }
      if (inserted) {
        // Typing on at the end of what was just typed grows the same <add> span.
        if (last && last.kind === "add" && last.index + last.length === position) last.length += inserted.length;
        else this.history.push({ kind: "add", index: position, length: inserted.length });
      }
    }
  }

  StudyEditor.ProactiveMemory = ProactiveMemory;
})(window.StudyEditor);
