// When the proactive paradigms ask for ghost text, and the asking: the idle timer (spec A2.2:
// every condition of `ready` must hold), L3's idle threshold (study.paradigms.proactive.policy,
// rule 3, which the server mirrors), the request with its timeout, and asking again with a
// growing wait while the model gets ready. An answer that came after the writer moved on is
// stale and never shown. Loaded before editor-proactive.js, which shows what comes.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const REQUEST_TIMEOUT_MS = 20000;
  const RETRY_CAP_MS = 30000; // the longest wait between two asks while the model gets ready
  const wordsIn = (text) => (text.match(/\S+/g) || []).length;

  class ProactiveTrigger {
    // `settings`: boot.proactive and promptWords; `page`: the editor page's
    // (study/static/editor-parts.js); `memory`: StudyEditor.ProactiveMemory; `suggestion`:
    // {record(name, source, fields), isShown(), open(answer), showStatus(state, detail)}.
    constructor(settings, page, memory, suggestion) {
      this.settings = settings;
      this.page = page;
      this.textarea = page.textarea;
      this.memory = memory;
      this.suggestion = suggestion;
      this.inFlight = false;
      this.version = 0;          // bumped by every text change
      this.requestedVersion = -1;
      this.retries = 0;          // asks again in a row after a failure that passes (backoff)
      this.timer = null;
      this.stage = null;
      // An input method composing ("wom" before it becomes "我们") is the writer typing, though
      // no text change is logged until it commits: asked meanwhile, the model would continue
      // letters the text never holds, and the ghost text would cover the composition.
      this.composing = false;
      this.textarea.addEventListener("compositionstart", () => { this.composing = true; });
      this.textarea.addEventListener("compositionend", () => {
        this.composing = false;
        this.schedule();  // idle from now (a composition given up changed no text)
      });
    }

    textChanged() {
      this.version += 1;
    }

    // The text as it is now is no reason to ask (it holds the piece the writer just accepted).
    askedAlready() {
      this.requestedVersion = this.version;
    }

    // -- L3: the idle threshold (study.paradigms.proactive.policy, rule 3) ----------------------

    threshold() {
      const s = this.settings;
      if (!s.staged) return { idleMs: s.idleMs, stage: null };
      // Words written: the prompt's, which the text starts with, are not the writer's.
      const written = Math.max(0, wordsIn(this.textarea.value) - s.promptWords);
      const progress = written / Math.max(1, s.targetWords);
      const stage = progress < s.stageCuts[0] ? "early" : progress < s.stageCuts[1] ? "middle" : "late";
      const extra = Math.max(0, this.memory.rejectionRun() - s.rejectStreak + 1);
      const idleMs = Math.round(Math.min(s.maxIdleMs, s.stageIdleMs[stage] * s.rejectMultiplier ** extra));
      return { idleMs, stage };
    }

    // -- the trigger (spec A2.2: all must hold) ------------------------------------------------

    schedule() {
      clearTimeout(this.timer);
      const { idleMs } = this.threshold();
      this.timer = setTimeout(() => this.maybeAsk(), idleMs + 1);  // "more than" idleMs
      this.suggestion.showStatus();
    }

    stop() {
      clearTimeout(this.timer);
    }

    ready() {
      const t = this.textarea;
      return document.activeElement === t && !t.readOnly && !this.page.closed() && !this.composing
        && t.selectionStart === t.selectionEnd && t.selectionEnd === t.value.length
        && !this.suggestion.isShown() && !this.inFlight && this.version !== this.requestedVersion
        && t.value.trim().length > 0;
    }

    async maybeAsk() {
      if (!this.ready()) return;
      const { idleMs, stage } = this.threshold();
      if (stage !== this.stage && stage) this.suggestion.record("stage-change", "api", { stage });
      this.stage = stage;
      this.inFlight = true;
      this.requestedVersion = this.version;
      const asked = { version: this.version, caret: this.textarea.selectionEnd };
      this.suggestion.record("suggestion-get", "api", { trigger: "idle", idleMs, stage });
      this.page.busy(true);
      this.suggestion.showStatus("waiting");
      const answer = await this.fetch(idleMs);
      this.inFlight = false;
      this.page.busy(false);
      if (this.page.closed()) return;
      if (answer.error && answer.retryAfter) {
        // A failure that passes (the model is still loading, or busy): ask again for the same
        // text, waiting longer each time; typing meanwhile resets the idle timer instead.
        const waitMs = Math.min(RETRY_CAP_MS, answer.retryAfter * 1000 * 2 ** this.retries);
        this.retries += 1;
        this.suggestion.record("suggestion-fail", "api", { reason: `${answer.error}; asking again in ${Math.round(waitMs / 1000)} s`.slice(0, 300) });
        this.requestedVersion = null;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.maybeAsk(), waitMs);
        this.suggestion.showStatus("retrying", `${answer.error}, trying again in ${Math.round(waitMs / 1000)} s`);
        return;
      }
      this.retries = 0;
      if (answer.error) {
        this.suggestion.record("suggestion-fail", "api", { reason: answer.error.slice(0, 300) });
        this.suggestion.showStatus();
        return;
      }
      const moved = this.version !== asked.version || this.textarea.selectionEnd !== asked.caret
        || this.textarea.selectionStart !== this.textarea.selectionEnd;
      if (moved || document.activeElement !== this.textarea) {
        this.suggestion.record("suggestion-stale", "api", { suggestionId: answer.suggestionId });
        this.memory.stale();
        if (this.page.save) this.page.save();
        this.suggestion.showStatus();
        return;
      }
      this.suggestion.open(answer);
    }

    async fetch(idleMs) {
      const body = {
        doc: this.textarea.value,
        idle_ms: idleMs,
        ...this.memory.request(this.textarea.value, this.settings.stateful),
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
  }

  StudyEditor.ProactiveTrigger = ProactiveTrigger;
})(window.StudyEditor);
