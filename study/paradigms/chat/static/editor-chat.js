// A chat arm's panel beside the editor (study/paradigms/chat/arm.py): the writer asks the
// assistant and copies from its replies by hand; nothing is inserted for them. The replies are
// text the page holds, so the paste guard (editor-paste.js) lets them in, and the conversation
// is stored by the server (study/paradigms/chat/arm_api.py), not in the editor's log.
// A part of the core's editor page (study/static/editor-parts.js), started once the editor is
// ready when the boot data has `chat` (study/paradigms/chat/editor.py).
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  StudyEditor.startChat = function (options, say) {
    const list = document.getElementById("chat-messages");
    const form = document.getElementById("chat-form");
    const input = document.getElementById("chat-input");
    let sending = false;

    const show = (message) => {
      const item = document.createElement("li");
      item.dataset.role = message.role;
      item.textContent = message.content;
      list.appendChild(item);
      list.scrollTop = list.scrollHeight;
      // Every reply shown is offered text (editor-paste.js): pasting one is not from outside.
      if (message.role === "assistant") StudyEditor.offeredTexts.push(message.content);
    };

    async function post(content, clientId) {
      const response = await fetch(options.url, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ client_id: clientId, content }),
      });
      return { response, answer: await response.json().catch(() => null) };
    }

    async function send(event) {
      event.preventDefault();
      const content = input.value.trim();
      if (sending || !content) return;
      if (content.length > options.maxMessageChars) {
        say(`A message can have at most ${options.maxMessageChars} characters.`, "error");
        return;
      }
      sending = true;
      const clientId = `m${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
      show({ role: "user", content });
      input.value = "";
      try {
        const { response, answer } = await post(content, clientId);
        if (response.ok && answer) show(answer.assistant);
        else say(`The assistant did not answer: ${(answer && answer.error) || `HTTP ${response.status}`}`, "error");
      } catch (error) {
        say("The assistant did not answer: cannot reach the server; please try again.", "error");
      }
      sending = false;
    }

    form.addEventListener("submit", send);
    // A reload shows the conversation so far.
    fetch(options.url, { cache: "no-store" })
      .then((response) => (response.ok ? response.json() : null))
      .then((answer) => { if (answer) answer.messages.forEach(show); })
      .catch(() => {});
  };

  StudyEditor.register({
    name: "chat",
    start(boot, page) {
      if (!boot.chat) return null;
      StudyEditor.startChat(boot.chat, page.say);
      return {};
    },
  });
})(window.StudyEditor);
