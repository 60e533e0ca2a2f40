// Proactive co-writing (MindCopilot L1-L3): the idle trigger, ghost text, accept / partial
// accept / reject, modification of accepted text, and the history L2 and L3 send.
//
// Event vocabulary (schemas/proactive-event.schema.json, README "Proactive co-writing"): every
// record carries `proactive` {...} (the server adds the paradigm: the page does not know it); a
// suggestion is
//   suggestion-get (api, trigger "idle") -> suggestion-open (api, one item, suggestionId)
//   accept:  suggestion-select (user) -> suggestion-close (api, closeReason "accept")
//            -> text-insert (api, the text, span)
//   partial: suggestion-select (user, partial) -> text-insert (api, the next word) ...
//   reject:  suggestion-close (user, closeReason "esc" | "typed" | "cursor" | "click" | "blur")
//   stale:   suggestion-stale (api): the answer came after the writer moved on; never shown
// plus suggestion-modify (api) after a writer's edit inside an accepted span, and window-blur
// / window-focus (user). Registered as a part of the core's editor page (study/static/
// editor-parts.js, which says what `page` offers): editor.js calls the `on*` methods.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const REQUEST_TIMEOUT_MS = 20000;
  const RETRY_CAP_MS = 30000; // the longest wait between two asks while the model gets ready
  const CURSOR_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"]);
  const MODIFIER_KEYS = new Set(["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock", "Fn"]);
  const wordsIn = (text) => (text.match(/\S+/g) || []).length;

  class Proactive {
    // `page`: the editor page's (study/static/editor-parts.js). `memory`: what memory() returned before a reload (this
    // browser's saved copy), or the server's rebuild from the stored events
    // (study.paradigms.proactive.memory), or nothing in a new session.
    constructor(settings, page, memory) {
      this.settings = settings;
      this.page = page;
      this.textarea = page.textarea;
      this.ghost = new StudyEditor.GhostLayer(this.textarea);
      this.current = null;       // the suggestion on screen: {id, text, rest, anchor, partial}
      this.inFlight = false;
      this.version = 0;          // bumped by every text change
      this.requestedVersion = -1;
      this.retries = 0;          // asks again in a row after a failure that passes (backoff)
      this.timer = null;
      this.accepted = [];        // {id, start, end, at, modified}
      this.history = [];         // L2's items: {kind, index, length} or {kind, index, text}
      this.outcomes = [];        // per suggestion shown, oldest first (L3's rejection run)
      this.stage = null;
      if (memory) this.restore(memory);
      this.buildStatus();
      window.addEventListener("blur", () => this.onWindow("window-blur"));
      window.addEventListener("focus", () => this.onWindow("window-focus"));
      // A click anywhere (in the text or outside it) rejects, as in CoAuthor's popup.
      document.addEventListener("mousedown", () => this.reject("click"));
      this.schedule();
    }

    // -- the interaction memory, kept across reloads ------------------------------------------

    memory() {
      return { history: this.history, outcomes: this.outcomes, accepted: this.accepted };
    }

    restore(memory) {
      if (Array.isArray(memory.history)) this.history = memory.history;
      if (Array.isArray(memory.outcomes)) this.outcomes = memory.outcomes;
      if (Array.isArray(memory.accepted)) this.accepted = memory.accepted;
    }

    // The saved copy is written with each event; the memory changes after some of them.
    remember() {
      if (this.page.save) this.page.save();
    }

    extension(fields = {}) {
      return { ...fields };
    }

    record(name, source, fields, details = {}) {
      this.page.record(name, source, { ...details, proactive: this.extension(fields) });
    }

    // -- L3: the idle threshold (study.paradigms.proactive.policy, rule 3) ----------------------

    threshold() {
      const s = this.settings;
      if (!s.staged) return { idleMs: s.idleMs, stage: null };
      // Words written: the prompt's, which the text starts with, are not the writer's.
      const written = Math.max(0, wordsIn(this.textarea.value) - s.promptWords);
      const progress = written / Math.max(1, s.targetWords);
      const stage = progress < s.stageCuts[0] ? "early" : progress < s.stageCuts[1] ? "middle" : "late";
      let run = 0;
      for (let i = this.outcomes.length - 1; i >= 0; i -= 1) {
        if (this.outcomes[i].startsWith("accepted")) break;
        if (this.outcomes[i] === "rejected") run += 1;
      }
      const extra = Math.max(0, run - s.rejectStreak + 1);
      const idleMs = Math.round(Math.min(s.maxIdleMs, s.stageIdleMs[stage] * s.rejectMultiplier ** extra));
      return { idleMs, stage };
    }

    // -- the trigger (spec A2.2: all must hold) ------------------------------------------------

    schedule() {
      clearTimeout(this.timer);
      const { idleMs } = this.threshold();
      this.timer = setTimeout(() => this.maybeAsk(), idleMs + 1);  // "more than" idleMs
      this.showStatus();
    }

    ready() {
      const t = this.textarea;
      return document.activeElement === t && !t.readOnly && !this.page.closed()
        && t.selectionStart === t.selectionEnd && t.selectionEnd === t.value.length
        && !this.ghost.isShown && !this.inFlight && this.version !== this.requestedVersion
        && t.value.trim().length > 0;
    }

    async maybeAsk() {
      if (!this.ready()) return;
      const { idleMs, stage } = this.threshold();
      if (stage !== this.stage && stage) this.record("stage-change", "api", { stage });
      this.stage = stage;
      this.inFlight = true;
      this.requestedVersion = this.version;
      const asked = { version: this.version, caret: this.textarea.selectionEnd };
      this.record("suggestion-get", "api", { trigger: "idle", idleMs, stage });
      this.page.busy(true);
      this.showStatus("waiting");
      const answer = await this.fetch(idleMs);
      this.inFlight = false;
      this.page.busy(false);
      if (this.page.closed()) return;
      if (answer.error && answer.retryAfter) {
        // A failure that passes (the model is still loading, or busy): ask again for the same
        // text, waiting longer each time; typing meanwhile resets the idle timer instead.
        const waitMs = Math.min(RETRY_CAP_MS, answer.retryAfter * 1000 * 2 ** this.retries);
        this.retries += 1;
        this.record("suggestion-fail", "api", { reason: `${answer.error}; asking again in ${Math.round(waitMs / 1000)} s`.slice(0, 300) });
        this.requestedVersion = null;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.maybeAsk(), waitMs);
        this.showStatus("retrying", `${answer.error}, trying again in ${Math.round(waitMs / 1000)} s`);
        return;
      }
      this.retries = 0;
      if (answer.error) {
        this.record("suggestion-fail", "api", { reason: answer.error.slice(0, 300) });
        this.showStatus();
        return;
      }
      const moved = this.version !== asked.version || this.textarea.selectionEnd !== asked.caret
        || this.textarea.selectionStart !== this.textarea.selectionEnd;
      if (moved || document.activeElement !== this.textarea) {
        this.record("suggestion-stale", "api", { suggestionId: answer.suggestionId });
        this.outcomes.push("stale");
        this.remember();
        this.showStatus();
        return;
      }
      this.open(answer);
    }

    async fetch(idleMs) {
      const stateful = this.settings.stateful;
      const body = {
        doc: this.textarea.value,
        idle_ms: idleMs,
        history: stateful ? this.history : [],
        outcomes: this.outcomes.filter((outcome) => outcome !== "shown"),
        kept_words: this.accepted.map((span) => wordsIn(this.textarea.value.slice(span.start, span.end))),
      };
      const controller = new AbortController();
      // As long as the server lets the model take (waitMs, from [suggestions] timeout_seconds).
      const timeout = setTimeout(() => controller.abort(), this.settings.waitMs || REQUEST_TIMEOUT_MS);
      try {
        const response = await fetch(this.settings.url, {
          method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body), signal: controller.signal,
        });
        const answer = await response.json().catch(() => null);
        if (!response.ok || !answer || !answer.suggestion) {
          const error = (answer && answer.error) || `the server answered HTTP ${response.status}`;
          // 503 and 429 with Retry-After: the server says the failure will pass, and when.
          const retryAfter = [429, 503].includes(response.status) ? Number(response.headers.get("Retry-After")) : 0;
          return { error, retryAfter: retryAfter > 0 ? retryAfter : 0 };
        }
        return answer;
      } catch (error) {
        return { error: error.name === "AbortError" ? "no answer in time" : "the server cannot be reached" };
      } finally {
        clearTimeout(timeout);
      }
    }

    // -- the suggestion on screen -------------------------------------------------------------

    open(answer) {
      const item = StudyEditor.cleanSuggestions([answer.suggestion]);
      this.current = {
        id: answer.suggestionId, text: item[0].original, rest: item[0].original,
        anchor: this.textarea.value.length, partial: false, outcome: this.outcomes.length,
      };
      this.record("suggestion-open", "api", {
        suggestionId: this.current.id, stage: answer.stage,
        maxTokens: answer.maxTokens,
      }, { currentSuggestions: item });
      this.ghost.show(this.current.rest);
      // The ghost layer is drawn over the text and hidden from screen readers (it repeats the
      // writer's text): the suggestion and its keys are said instead.
      const keys = this.settings.partialAccept
        ? "Tab accepts, Ctrl+Right arrow takes a word, Esc or typing rejects" : "Tab accepts, Esc or typing rejects";
      this.page.announce(`Suggestion (${keys}): ${this.current.rest.trim()}`);
      this.outcomes.push("shown");  // settled on close: "accepted", "rejected"
      this.remember();
      if (answer.rationale) this.logRationale(answer.rationale);
      this.showStatus("active");
    }

    settle(current, outcome) {
      this.outcomes[current.outcome] = outcome;
    }

    accept(wordOnly) {
      const current = this.current;
      let piece = current.rest;
      if (wordOnly) piece = (current.rest.match(/^\s*\S+/) || [current.rest])[0];
      const refusal = this.page.tooMuch(piece);
      if (refusal) {  // the ghost text stays: Esc or typing dismisses it as ever
        this.page.say(refusal, "error");
        return;
      }
      const last = piece.length === current.rest.length;
      this.record("suggestion-select", "user", { suggestionId: current.id, partial: !last || current.partial });
      if (last) {
        this.ghost.hide();
        this.record("suggestion-close", "api", { suggestionId: current.id, closeReason: "accept" });
      }
      const start = this.textarea.value.length;
      this.page.insert(piece, { proactive: this.extension({
        suggestionId: current.id, partial: wordOnly || current.partial,
        span: { index: start, length: piece.length },
      }) });
      this.version += 1;
      this.trackAccepted(current, start, piece.length);
      if (last) {
        this.current = null;
        this.settle(current, "accepted");
      } else {
        current.rest = current.rest.slice(piece.length);
        current.partial = true;
        this.ghost.show(current.rest);
      }
      this.requestedVersion = this.version;  // the accepted text is no reason to ask again
      this.remember();
      this.schedule();
    }

    trackAccepted(current, start, length) {
      const span = this.accepted.find((s) => s.id === current.id && s.end === start);
      if (span) span.end += length;
      else this.accepted.push({ id: current.id, start, end: start + length, at: Date.now(), outcome: current.outcome });
      const item = this.history.find((h) => h.kind === "accept" && h.id === current.id);
      if (item) item.length += length;
      else this.history.push({ kind: "accept", index: start, length, id: current.id });
    }

    reject(reason) {
      if (!this.current) return;
      const current = this.current;
      this.current = null;
      this.ghost.hide();
      this.record("suggestion-close", "user", { suggestionId: current.id, closeReason: reason });
      if (current.partial) {
        this.settle(current, "accepted");
      } else {
        this.settle(current, "rejected");
        this.history.push({ kind: "reject", index: current.anchor, text: current.text });
      }
      this.remember();
      this.showStatus();
    }

    // -- what the writer does (called by editor.js) -------------------------------------------

    onKeyDown(event) {
      if (event.key === "Tab") {
        event.preventDefault();  // Tab belongs to the ghost text here, not to focus changes
        if (this.current && !event.shiftKey) this.accept(false);
        return true;
      }
      if (!this.current) return false;
      if (event.key === "Escape") {
        event.preventDefault();
        this.reject("esc");
        return true;
      }
      if (this.settings.partialAccept && event.key === "ArrowRight" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.accept(true);
        return true;
      }
      if (!MODIFIER_KEYS.has(event.key)) this.reject(CURSOR_KEYS.has(event.key) ? "cursor" : "typed");
      return false;
    }

    // After editor.js logged a writer's text-insert or text-delete: `before` is the old text.
    onText(delta, before) {
      this.version += 1;
      if (this.current) this.reject("typed");  // e.g. a paste or a cut, with no key first
      let text = before;  // as each edit of the delta finds it (edits apply left to right)
      for (const [position, inserted, deleted] of StudyEditor.deltaEdits(delta)) {
        const gone = text.slice(position, position + deleted);
        text = text.slice(0, position) + inserted + text.slice(position + deleted);
        this.trackEdit(position, inserted, deleted, gone);
      }
      this.remember();
      this.schedule();
    }

    trackEdit(position, inserted, deleted, gone) {
      const windowMs = this.settings.modifyWindowMs;
      const now = Date.now();
      for (const span of this.accepted) {
        const mapped = StudyEditor.mapSpan(span, position, inserted, deleted);
        span.start = mapped.start;
        span.end = mapped.end;
        if (mapped.touched && (windowMs === 0 || now - span.at <= windowMs)) {
          this.outcomes[span.outcome] = "accepted_modified";
          this.record("suggestion-modify", "api", {
            suggestionId: span.id, span: { index: span.start, length: span.end - span.start },
            text: this.textarea.value.slice(span.start, span.end),
          });
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

    onCursor() {
      this.reject("cursor");
    }

    onWindow(name) {
      if (this.page.closed()) return;
      if (name === "window-blur") this.reject("blur");
      this.record(name, "user", {});
    }

    stop() {
      clearTimeout(this.timer);
      this.ghost.hide();
    }

    // -- status bar and assistant log (Fig. 7) ------------------------------------------------

    buildStatus() {
      this.status = document.createElement("span");
      this.status.className = "status-bar";
      this.status.dataset.testid = "status-bar";
      const footer = document.querySelector(".editor-footer");
      footer.insertBefore(this.status, footer.firstChild);
      const keys = document.getElementById("keys");
      if (keys) {
        keys.textContent = this.settings.partialAccept
          ? "Pause to get a suggestion · Tab: accept · Ctrl+→: accept a word · Esc or keep typing: reject"
          : "Pause to get a suggestion · Tab: accept · Esc or keep typing: reject";
      }
      this.log = document.createElement("ul");
      this.log.className = "assistant-log";
      this.log.dataset.testid = "assistant-log";
      this.log.setAttribute("aria-label", "Assistant log");
      this.log.hidden = true;
      document.querySelector(".editor-wrap").after(this.log);
    }

    showStatus(state, detail) {
      const shown = state || (this.inFlight ? "waiting" : this.current ? "active" : "idle");
      const words = wordsIn(this.textarea.value);
      // Fig. 7's bar also shows "Mode: L2"; here it does not, so the writer cannot tell their
      // condition (issue 25).
      this.status.textContent = `Suggestion: ${detail || shown} | ${words} words`;
      this.status.dataset.state = shown;
    }

    logRationale(text) {
      if (!this.settings.rationalePanel) return;
      const line = document.createElement("li");
      line.textContent = `[${new Date().toTimeString().slice(0, 8)}] ${text}`;
      this.log.append(line);
      this.log.hidden = false;
      this.log.scrollTop = this.log.scrollHeight;
    }
  }

  StudyEditor.Proactive = Proactive;

  // The ghost text (boot.proactive, L1-L3), and in the other sessions of a MindCopilot study
  // (boot.extension) the window switches Table 5 compares, which the page logs for them.
  StudyEditor.register({
    name: "proactive",
    start(boot, page, restored) {
      if (!boot.proactive) return boot.extension ? { windowSwitches: "page" } : null;
      // The interaction memory from the same place as the text; the saved copy's key is
      // `proactive`, as is the server's (study.paradigms.proactive.editor.state).
      const from = restored.saved || restored.server;
      const settings = { ...boot.proactive, promptWords: wordsIn(boot.prompt) };
      const ghost = new Proactive(settings, page, from ? from.proactive : undefined);
      return {
        keysFirst: true,  // the ghost text covers the text: Tab accepts it before any list opens
        windowSwitches: "own",
        onKeyDown: (event) => ghost.onKeyDown(event),
        onText: (delta, before) => ghost.onText(delta, before),
        onCursor: () => ghost.onCursor(),
        memory: () => ({ proactive: ghost.memory() }),
        stop: () => ghost.stop(),
      };
    },
  });
})(window.StudyEditor);
