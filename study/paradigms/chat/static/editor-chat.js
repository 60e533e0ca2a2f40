// A chat arm's panel beside the editor (study/paradigms/chat/arm.py): the writer asks the
// assistant and copies from its replies by hand; nothing is inserted for them. The replies are
// text the page holds, so the paste guard (editor-paste.js) lets them in, and the conversation
// is stored by the server (study/paradigms/chat/arm_api.py), not in the editor's log.
// A part of the core's editor page (study/static/editor-parts.js), started once the editor is
// ready when the boot data has `chat` (study/paradigms/chat/editor.py).
//
// A message without a reply stays in the list, marked, with "Try again": the server stored it
// before asking the model, and refuses a new message (409, naming the waiting one's
// pending_client_id) until it has a reply. Trying again sends the same client id and text, which
// the server answers, or, when the reply was stored after all, answers with the stored one. A
// reloaded page finds the waiting message in the conversation (pending_client_id) and offers the
// same. What the writer typed is never dropped: the draft and a message the server may not have
// received are kept in the editor's saved copy (memory()), and a message the server refused
// goes back into the box.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  // The server keeps the message after these (it is stored before the model is asked): a limit
  // (429), every slot busy (503), or the model failed (502, 504). After a 5xx of its own or no
  // answer at all it may have kept it or not; the same client id is right either way.
  const KEPT = [429, 502, 503, 504];
  const LOAD_RETRY_MS = [1000, 2000, 5000, 10000];

  const newClientId = () => `m${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;

  // `page`: the editor page's (editor-parts.js); `saved`: what memory() returned before a reload.
  StudyEditor.startChat = function (options, page, saved) {
    const list = document.getElementById("chat-messages");
    const form = document.getElementById("chat-form");
    const input = document.getElementById("chat-input");
    const sendButton = form.querySelector("button[type=submit]");
    const note = document.getElementById("chat-note");
    const noteText = document.getElementById("chat-error");
    const retryButton = document.getElementById("chat-retry");
    // The writer's message without a reply: {clientId, content, afterSeq (the newest message
    // shown when it was sent), item (its list entry)}.
    let pending = null;
    let sending = false;
    let ready = false;  // the conversation is loaded (or cannot be yet): Send waits for it
    let lastSeq = -1;
    // The message without a reply before a reload, which the server may not have received: kept
    // until the conversation is loaded and says whether it arrived.
    let beforeReload = saved && saved.pending ? saved.pending : null;
    let loaded = false;  // the conversation so far is shown
    if (saved && typeof saved.draft === "string" && !input.value) input.value = saved.draft;

    const show = (message) => {
      const item = document.createElement("li");
      item.dataset.role = message.role;
      item.dataset.testid = "chat-message";
      if (Number.isInteger(message.seq)) {
        item.dataset.seq = String(message.seq);
        lastSeq = Math.max(lastSeq, message.seq);
      }
      item.textContent = message.content;
      list.appendChild(item);
      list.scrollTop = list.scrollHeight;
      // Every reply shown is offered text (editor-paste.js): pasting one is not from outside.
      if (message.role === "assistant") StudyEditor.offeredTexts.push(message.content);
      return item;
    };

    function tell(text) {
      noteText.textContent = text;
      note.hidden = !text;
    }

    function refresh() {
      sendButton.disabled = !ready || sending || pending !== null;
      retryButton.hidden = sending || pending === null;
      list.setAttribute("aria-busy", sending ? "true" : "false");
    }

    // Send is disabled while its message is answered, which drops a focus on it to the page's
    // top. A focus left nowhere goes back to the message box, or to "Try again" when the reply
    // did not come; one the writer moved (back into their text) stays.
    function placeFocus() {
      const active = document.activeElement;
      if (active && active !== document.body && !active.disabled && active.offsetParent !== null) return;
      (retryButton.hidden ? input : retryButton).focus();
    }

    function remember() {
      page.save();  // the saved copy takes memory() below
    }

    // Text the server did not keep goes back into the box, before whatever is there now.
    function giveBack(content) {
      const now = input.value.trim();
      input.value = now && now !== content ? `${content}\n${input.value}` : content;
    }

    function offer(message, sentence) {
      pending = message;
      pending.item.dataset.state = "unanswered";
      tell(sentence);
    }

    async function post(content, clientId) {
      const response = await fetch(options.url, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ client_id: clientId, content }),
      });
      return { response, answer: await response.json().catch(() => null) };
    }

    // Ask for the reply to `pending` (a new message or one tried again).
    async function ask() {
      const message = pending;
      sending = true;
      message.item.dataset.state = "sending";
      tell("");
      refresh();
      let response = null;
      let answer = null;
      try {
        ({ response, answer } = await post(message.content, message.clientId));
      } catch (error) {
        response = null;  // the server cannot be reached: the message is kept
      }
      sending = false;
      if (response && response.ok && answer) {
        pending = null;
        delete message.item.dataset.state;
        message.item.dataset.seq = String(answer.user.seq);
        lastSeq = Math.max(lastSeq, answer.user.seq);
        if (!list.querySelector(`li[data-seq="${answer.assistant.seq}"]`)) {
          show(answer.assistant);
          // Only a reply that just came is said: the list is no live region, or each reload
          // (and each load after a 409) would read the conversation again from the start.
          page.announce(`The assistant replied: ${answer.assistant.content}`);
        }
        if (!loaded) await load();  // sent before the conversation could be read: show it whole
      } else if (response && response.status === 409 && answer && answer.pending_client_id) {
        // An earlier message of this session waits for its reply (sent from another tab, or
        // before this page knew): this one was not stored. It goes back into the box, and the
        // conversation is read again to offer the waiting one.
        pending = null;
        message.item.remove();
        giveBack(message.content);
        await load();
      } else if (response === null || response.status >= 500 || KEPT.includes(response.status)) {
        const why = (answer && answer.error) || "cannot reach the server";
        offer(message, `The assistant did not answer: ${why}. Your message is kept.`);
      } else {
        // Refused and not stored (too long, the session is no longer writing): the text goes back.
        pending = null;
        message.item.remove();
        giveBack(message.content);
        tell(`The assistant did not answer: ${(answer && answer.error) || `HTTP ${response.status}`}`);
      }
      remember();
      refresh();
      placeFocus();
    }

    function send(event) {
      event.preventDefault();
      const content = input.value.trim();
      if (!ready || sending || !content) return;
      if (pending) {
        tell("Your previous message has no reply yet: try it again first; your new message stays here.");
        return;
      }
      if (content.length > options.maxMessageChars) {
        tell(`A message can have at most ${options.maxMessageChars} characters.`);
        return;
      }
      const afterSeq = lastSeq;
      pending = { clientId: newClientId(), content, afterSeq, item: show({ role: "user", content }) };
      input.value = "";
      remember();
      ask();
    }

    // The conversation as the server has it; the message waiting for its reply is offered again.
    async function load() {
      let answer = null;
      try {
        const response = await fetch(options.url, { cache: "no-store" });
        answer = response.ok ? await response.json() : null;
      } catch (error) {
        answer = null;
      }
      if (!answer) return false;
      loaded = true;
      list.textContent = "";
      lastSeq = -1;
      answer.messages.forEach(show);
      const last = answer.messages[answer.messages.length - 1];
      if (answer.pending_client_id && last && last.role === "user") {
        const item = list.lastElementChild;
        offer({ clientId: answer.pending_client_id, content: last.content, afterSeq: last.seq - 1, item },
          "Your last message has no reply yet. Try again to get one.");
      }
      if (beforeReload) {
        // Sent before a reload: stored (a user message with its text after the one it followed),
        // or never received, then offered again under its own id.
        const arrived = answer.messages.some((m) => m.role === "user" && m.seq > beforeReload.afterSeq && m.content === beforeReload.content);
        if (!arrived && !pending) {
          offer({ ...beforeReload, item: show({ role: "user", content: beforeReload.content }) },
            "Your last message may not have reached the assistant. Try again to get a reply.");
        } else if (!arrived) {
          giveBack(beforeReload.content);
        }
        beforeReload = null;
      }
      remember();
      refresh();
      return true;
    }

    // At the start: the conversation, asked for again a few times while the server cannot be
    // reached. The writer may send meanwhile (their message then goes first, and a 409 loads
    // the conversation), and a message kept from before the reload goes back into the box.
    async function loadAtStart() {
      for (let attempt = 0; !(await load()); attempt += 1) {
        if (beforeReload) {
          giveBack(beforeReload.content);
          beforeReload = null;
          remember();
        }
        ready = true;
        refresh();
        if (attempt >= LOAD_RETRY_MS.length) return;
        await new Promise((resolve) => setTimeout(resolve, LOAD_RETRY_MS[attempt]));
        if (sending || pending) return;
      }
      ready = true;
      refresh();
    }

    form.addEventListener("submit", send);
    retryButton.addEventListener("click", () => { if (pending && !sending) ask(); });
    input.addEventListener("input", remember);
    refresh();
    loadAtStart();  // a reload shows the conversation so far

    return {
      memory() {
        const message = pending ? { clientId: pending.clientId, content: pending.content, afterSeq: pending.afterSeq } : beforeReload;
        return { chatArm: { draft: input.value, pending: message } };
      },
    };
  };

  StudyEditor.register({
    name: "chat",
    start(boot, page, restored) {
      if (!boot.chat) return null;
      return StudyEditor.startChat(boot.chat, page, restored.saved ? restored.saved.chatArm : null);
    },
  });
})(window.StudyEditor);
