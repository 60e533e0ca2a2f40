// Proactive co-writing (MindCopilot L1-L3): the suggestion on screen as ghost text and what
// the writer's keys and edits do to it (accept, partial accept, reject). Loaded after
// editor-ghost.js (the layer that draws it, span mapping), editor-proactive-memory.js (the
// history L2 and L3 send, modification of accepted text), editor-proactive-trigger.js (when
// to ask, the request) and editor-proactive-status.js (the status bar and assistant log).
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
  const CURSOR_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"]);
  const MODIFIER_KEYS = new Set(["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock", "Fn"]);
  const wordsIn = (text) => (text.match(/\S+/g) || []).length;

  class Proactive {
    // `page`: the editor page's (study/static/editor-parts.js). `memory`: what memoryToSave()
    // returned before a reload (this browser's saved copy), or the server's rebuild from the
    // stored events (study.paradigms.proactive.memory), or nothing in a new session.
    constructor(settings, page, memory) {
      this.settings = settings;
      this.page = page;
      this.textarea = page.textarea;
      this.ghost = new StudyEditor.GhostLayer(this.textarea);
      this.current = null;       // the suggestion on screen: {id, text, rest, anchor, partial}
      this.memory = new StudyEditor.ProactiveMemory(memory);
      this.status = new StudyEditor.ProactiveStatus(settings);
      this.trigger = new StudyEditor.ProactiveTrigger(settings, page, this.memory, {
        record: (name, source, fields) => this.record(name, source, fields),
        isShown: () => this.ghost.isShown,
        open: (answer) => this.open(answer),
        showStatus: (state, detail) => this.showStatus(state, detail),
      });
      window.addEventListener("blur", () => this.onWindow("window-blur"));
      window.addEventListener("focus", () => this.onWindow("window-focus"));
      // A click anywhere (in the text or outside it) rejects, as in CoAuthor's popup.
      document.addEventListener("mousedown", () => this.reject("click"));
      this.trigger.schedule();
    }

    // -- the interaction memory, kept across reloads ------------------------------------------

    memoryToSave() {
      return this.memory.saved();
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

    // -- the suggestion on screen -------------------------------------------------------------

    open(answer) {
      const item = StudyEditor.cleanSuggestions([answer.suggestion]);
      this.current = {
        id: answer.suggestionId, text: item[0].original, rest: item[0].original,
        anchor: this.textarea.value.length, partial: false, outcome: this.memory.outcomes.length,
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
      this.memory.shown();
      this.remember();
      if (answer.rationale) this.status.logRationale(answer.rationale);
      this.showStatus("active");
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
      this.trigger.textChanged();
      this.memory.took(current, start, piece.length);
      if (last) {
        this.current = null;
        this.memory.settle(current.outcome, "accepted");
      } else {
        current.rest = current.rest.slice(piece.length);
        current.partial = true;
        this.ghost.show(current.rest);
      }
      this.trigger.askedAlready();  // the accepted text is no reason to ask again
      this.remember();
      this.trigger.schedule();
    }

    reject(reason) {
      if (!this.current) return;
      const current = this.current;
      this.current = null;
      this.ghost.hide();
      this.record("suggestion-close", "user", { suggestionId: current.id, closeReason: reason });
      if (current.partial) {
        this.memory.settle(current.outcome, "accepted");
      } else {
        this.memory.settle(current.outcome, "rejected");
        this.memory.rejected(current);
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
      this.trigger.textChanged();
      if (this.current) this.reject("typed");  // e.g. a paste or a cut, with no key first
      let text = before;  // as each edit of the delta finds it (edits apply left to right)
      for (const [position, inserted, deleted] of StudyEditor.deltaEdits(delta)) {
        const gone = text.slice(position, position + deleted);
        text = text.slice(0, position) + inserted + text.slice(position + deleted);
        this.memory.edited(position, inserted, deleted, gone, this.settings.modifyWindowMs, (span) => {
          this.record("suggestion-modify", "api", {
            suggestionId: span.id, span: { index: span.start, length: span.end - span.start },
            text: this.textarea.value.slice(span.start, span.end),
          });
        });
      }
      this.remember();
      this.trigger.schedule();
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
      this.trigger.stop();
      this.ghost.hide();
    }

    // -- the status bar (Fig. 7) ----------------------------------------------------------------

    showStatus(state, detail) {
      const shown = state || (this.trigger.inFlight ? "waiting" : this.current ? "active" : "idle");
      this.status.show(shown, wordsIn(this.textarea.value), detail);
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
        memory: () => ({ proactive: ghost.memoryToSave() }),
        stop: () => ghost.stop(),
      };
    },
  });
})(window.StudyEditor);
