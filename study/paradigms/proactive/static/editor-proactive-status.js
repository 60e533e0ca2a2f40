// The proactive paradigms' status bar and assistant log (MindCopilot Fig. 7): what the ghost
// text is doing (idle, waiting, active, retrying) with the word count, the keys' line, and the
// log of the model's rationales where the study shows it ([proactive] rationale_panel).
// Loaded before editor-proactive.js, which makes one for its page.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  class ProactiveStatus {
    // `settings`: boot.proactive (partialAccept, rationalePanel).
    constructor(settings) {
      this.settings = settings;
      this.bar = document.createElement("span");
      this.bar.className = "status-bar";
      this.bar.dataset.testid = "status-bar";
      const footer = document.querySelector(".editor-footer");
      footer.insertBefore(this.bar, footer.firstChild);
      const keys = document.getElementById("keys");
      if (keys) {
        keys.textContent = settings.partialAccept
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

    // `state`: idle, waiting, active or retrying; `detail`: words said instead of it.
    show(state, words, detail) {
      // Fig. 7's bar also shows "Mode: L2"; here it does not, so the writer cannot tell their
      // condition (issue 25).
      this.bar.textContent = `Suggestion: ${detail || state} | ${words} words`;
      this.bar.dataset.state = state;
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

  StudyEditor.ProactiveStatus = ProactiveStatus;
})(window.StudyEditor);
