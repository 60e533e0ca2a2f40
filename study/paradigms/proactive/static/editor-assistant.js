// L0's assistant panel (MindCopilot Table 3 and Fig. 1 left, "Passive Collaboration"): the
// writer types a request, the model answers it completely, and the writer moves what they want
// into the document by their own copy and paste or typing (or, when the study turns it on, the
// "Insert at cursor" button). Nothing reaches the document otherwise.
//
// Event vocabulary (schemas/coauthor-proactive.schema.json; every record carries `proactive`,
// whose paradigm the server fills in):
//   chat-send (user, text: the request) -> chat-receive (api, chatId, text: the response),
//     or suggestion-fail (api, reason) when no response came
//   chat-copy (user, chatId, text: what was copied from a response)
//   text-insert (user, paste: true, and chatId when the pasted text is from a response), or
//     with the button text-insert (user, chatId, insert: true): the writer's own act either way
//   panel-focus (user, panel: "assistant" | "editor"): the writer moved between editor and
//     panel (Table 5's switches, reading (b)); window-blur / window-focus are logged by editor.js.
// Registered as a part of the core's editor page (study/static/editor-parts.js, which says what
// `page` offers); editor.js logs each text-insert with the extension takePaste() gives it.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const REQUEST_TIMEOUT_MS = 60000;

  class AssistantPanel {
    constructor(settings, page) {
      this.settings = settings;
      this.page = page;
      this.panel = document.getElementById("assistant-panel");
      this.replies = document.getElementById("assistant-replies");
      this.input = document.getElementById("assistant-input");
      this.sendButton = document.getElementById("assistant-send");
      this.responses = new Map();  // chatId -> response text, for pastes and copies
      this.pending = false;
      this.pasted = null;          // the extension of the paste under way, for the next input
      this.region = "editor";      // where the focus was last: "editor" or "assistant"
      document.getElementById("assistant-form").addEventListener("submit", (event) => {
        event.preventDefault();
        this.send();
      });
      this.input.addEventListener("keydown", (event) => {
        // Enter sends, Shift+Enter starts a new line, as in chat boxes.
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          this.send();
        }
      });
      document.addEventListener("copy", () => this.onCopy());
      page.textarea.addEventListener("paste", (event) => this.onPaste(event));
      this.panel.addEventListener("focusin", () => this.focus("assistant"));
      page.textarea.addEventListener("focus", () => this.focus("editor"));
    }

    record(name, source, fields) {
      this.page.record(name, source, { proactive: fields });
    }

    focus(region) {
      if (region === this.region || this.page.closed()) return;
      this.region = region;
      this.record("panel-focus", "user", { panel: region });
    }

    // -- asking --------------------------------------------------------------------------------

    async send() {
      const request = this.input.value.trim();
      if (!request || this.pending || this.page.closed()) return;
      this.pending = true;
      this.sendButton.disabled = true;
      this.input.value = "";
      this.show("writer", request);
      this.record("chat-send", "user", { text: request });
      this.page.busy(true);
      const answer = await this.fetchAnswer(request);
      this.page.busy(false);
      this.pending = false;
      this.sendButton.disabled = this.page.closed();
      if (this.page.closed()) return;
      if (answer.response !== undefined) {
        this.responses.set(answer.chatId, answer.response);
        this.record("chat-receive", "api", { chatId: answer.chatId, text: answer.response });
        this.show("assistant", answer.response, answer.chatId);
        // Said once, as the chat arm's panel says a reply: the list is no live region.
        this.page.announce(`The assistant replied: ${answer.response}`);
      } else {
        this.record("suggestion-fail", "api", { reason: answer.error.slice(0, 300) });
        const message = `No answer this time: ${answer.error}. Try again.`;
        this.show("error", message);
        this.page.announce(`${message} Your request is back in the box.`);
        this.input.value = request;
      }
    }

    async fetchAnswer(request) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
      try {
        const response = await fetch(this.settings.url, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ request, doc: this.page.textarea.value }),
          signal: controller.signal,
        });
        const body = await response.json().catch(() => ({}));
        if (response.ok && typeof body.response === "string") return body;
        return { error: body.error || `HTTP ${response.status}` };
      } catch (error) {
        return { error: "the assistant did not answer in time" };
      } finally {
        clearTimeout(timer);
      }
    }

    show(role, text, chatId) {
      const item = document.createElement("li");
      item.dataset.role = role;
      item.dataset.testid = role === "assistant" ? "assistant-reply" : `assistant-${role}`;
      const body = document.createElement("div");
      body.className = "assistant-text";
      body.textContent = text;
      item.append(body);
      if (chatId !== undefined) {
        // A response shown is offered text (editor-paste.js): pasting it is not from outside.
        StudyEditor.offeredTexts.push(text);
        item.dataset.chatId = String(chatId);
        if (this.settings.insertButton) {
          const button = document.createElement("button");
          button.type = "button";
          button.className = "assistant-insert";
          button.dataset.testid = "assistant-insert";
          button.textContent = "Insert at cursor";
          button.addEventListener("click", () => this.insertAtCursor(text, chatId));
          item.append(button);
        }
      }
      this.replies.append(item);
      item.scrollIntoView({ block: "nearest" });
    }

    // -- moving text ---------------------------------------------------------------------------

    onCopy() {
      const selection = window.getSelection();
      if (!selection || selection.isCollapsed || !this.replies.contains(selection.anchorNode)) return;
      const node = selection.anchorNode.nodeType === Node.ELEMENT_NODE ? selection.anchorNode : selection.anchorNode.parentElement;
      const item = node.closest("li[data-chat-id]");
      if (!item) return;
      this.record("chat-copy", "user", { chatId: Number(item.dataset.chatId), text: selection.toString().slice(0, 50000) });
    }

    onPaste(event) {
      // A paste the page refused (editor-paste.js, which listens first) puts nothing in: the
      // writer's next keystroke must not be logged as a paste.
      if (event.defaultPrevented) return;
      const text = event.clipboardData ? event.clipboardData.getData("text/plain") : "";
      const fields = { paste: true };
      const needle = text.trim();
      for (const [chatId, response] of this.responses) {
        if (needle && response.includes(needle)) fields.chatId = chatId;
      }
      this.pasted = fields;
    }

    // The writer's button press puts the response at the caret (replacing a selection) as an
    // input of the textarea, which editor.js logs like typing, with this extension.
    insertAtCursor(text, chatId) {
      const textarea = this.page.textarea;
      if (this.page.closed() || textarea.readOnly) return;
      textarea.focus();
      this.pasted = { chatId, insert: true };
      textarea.setRangeText(text, textarea.selectionStart, textarea.selectionEnd, "end");
      textarea.dispatchEvent(new Event("input"));
    }

    // The extension of the text-insert editor.js is about to log, if a paste or the button made it.
    takePaste() {
      const fields = this.pasted;
      this.pasted = null;
      return fields;
    }

    stop() {
      this.sendButton.disabled = true;
      this.input.readOnly = true;
    }
  }

  StudyEditor.AssistantPanel = AssistantPanel;

  StudyEditor.register({
    name: "assistant panel",
    start(boot, page) {
      if (!boot.assistantPanel) return null;
      const panel = new AssistantPanel(boot.assistantPanel, page);
      return {
        takePaste() {
          const fields = panel.takePaste();  // a paste or Insert at cursor
          return fields ? { proactive: fields } : null;
        },
        stop: () => panel.stop(),
      };
    },
  });
})(window.StudyEditor);
