// The chat study's page (templates/chat/chat.html; CollabLLM App. E step 3).
//
// The conversation lives on the server (study/paradigms/chat/api.py): a message is sent with a
// browser-made client id, so when an answer is lost (network, a restarted server) the same
// request is simply sent again and the server returns the stored reply instead of storing the
// message twice. The document pane's edits are logged as the writing editor logs them
// (text-insert / text-delete with Quill deltas, StudyEditor.diff) and go through the editor's
// outbox (editor-outbox.js): kept in localStorage until the server acknowledges them, so a
// reload or a killed server loses nothing. Event names: schemas/chat-event-batch.schema.json.
// Replies are streamed: the page shows the reply as the model writes it, and the stored reply
// (the whole one) replaces it when the server says it is done. The running document's rule is
// chat-merge.js, the blocking periodic rating chat-rating.js.
"use strict";

(function () {
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const $ = (id) => document.getElementById(id);
  const ui = {
    messages: $("messages"), input: $("chat-input"), send: $("chat-send"), form: $("chat-form"),
    error: $("chat-error"), retry: $("chat-retry"), doc: $("document"), words: $("word-count"),
    exchanges: $("exchange-count"), save: $("save-state"), finish: $("finish"),
    spinner: document.querySelector("[data-testid=chat-spinner]"), announcer: $("announce"),
  };
  const SAVE_TEXT = {
    saved: "All changes saved",
    saving: "Saving…",
    reconnecting: "Reconnecting… your work is kept in this browser",
    error: "Not saved on the server",
  };
  const RETRY_MS = [500, 1000, 2000, 4000, 5000];
  const FINISH_TIMEOUT_MS = 20000;  // a finish request given up after this (see finish)

  let outbox = null;
  let nextSeq = 0;
  let lastDoc = "";
  let exchanges = 0;
  let owed = [];
  let inFlight = null; // {clientId, content}: a message sent and not yet answered
  let busy = false;
  let closed = false; // another tab or browser took the session: this page logs and sends no more
  let lastMergedSeq = -1; // the last reply merged into the running document ([chat] document_pane)
  const merged = boot.documentPane !== "edited";

  function newClientId() {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function log(eventName, eventSource, extra = {}) {
    if (outbox.full) return;  // the session stores no more (atLimit): nothing is numbered
    const record = {
      seq: nextSeq, eventName, eventSource, eventTimestamp: Date.now(), textDelta: "",
      messageSeq: null, ...extra,
    };
    nextSeq += 1;
    outbox.add(record);
  }

  function snapshot() {
    return { doc: ui.doc.value, nextSeq, inFlight, lastMergedSeq };
  }

  function showSaveState(state, message) {
    ui.save.textContent = message || SAVE_TEXT[state] || "";
  }

  function refresh() {
    ui.words.textContent = String(window.ChatMerge.wordCount(ui.doc.value));
    ui.exchanges.textContent = `${exchanges} of ${boot.minExchanges} exchanges`;
    const blocked = owed.length > 0;
    const enough = exchanges >= boot.minExchanges;
    // A rating due after the last exchange may be skipped by finishing ([chat] rating_before_finish).
    const skippable = blocked && enough && !boot.ratingBeforeFinish && owed.every((item) => item.occasion >= exchanges);
    ui.input.disabled = closed || busy || blocked;
    ui.send.disabled = closed || busy || blocked || inFlight !== null;
    ui.finish.disabled = closed || busy || (blocked && !skippable) || !enough;
    document.querySelectorAll("[data-role=finish-instead]").forEach((button) => {
      button.hidden = !skippable;
      button.disabled = closed || busy;
    });
    document.querySelectorAll("[data-testid=rating-submit]").forEach((button) => { button.disabled = closed; });
    document.querySelectorAll("[data-testid=insert-reply]").forEach((button) => {
      button.disabled = closed || Boolean(outbox && outbox.full);
    });
    ui.spinner.hidden = !busy;
  }

  // -- where the focus goes -----------------------------------------------------------------

  // Sending disables the message box and Send, which drops the focus to the page's top: a
  // keyboard or screen-reader user lost their place at every message. Once the answer is
  // there, a focus left nowhere goes where the participant is to act next: the rating that
  // is owed, "Try again", or the message box. A focus they moved themselves (into the
  // document pane, while the reply was written) stays where it is.
  function placeFocus() {
    const active = document.activeElement;
    if (active && active !== document.body && !active.disabled && active.offsetParent !== null) return;
    const panel = document.querySelector(".rating-panel:not([hidden])");
    const target = panel ? panel.querySelector("input, textarea, button")
      : !ui.retry.hidden ? ui.retry : !ui.input.disabled ? ui.input : null;
    if (target) target.focus();
  }

  // -- the conversation --------------------------------------------------------------------

  // Said to a screen reader only (the template's #announce). Emptied first, so a reply the
  // same as the one before is said again.
  let announcing = null;
  function announce(text) {
    clearTimeout(announcing);
    ui.announcer.textContent = "";
    announcing = setTimeout(() => { ui.announcer.textContent = text; }, 50);
  }

  // Shows a stored message; false when the list has it already.
  function addMessage(message) {
    if (ui.messages.querySelector(`li[data-seq="${message.seq}"]`)) return false;
    const item = document.createElement("li");
    item.dataset.role = message.role;
    item.dataset.seq = String(message.seq);
    item.setAttribute("data-testid", "chat-message");
    item.textContent = message.content;
    if (message.role === "assistant" && !merged) {
      const button = document.createElement("button");
      button.type = "button";
      button.disabled = closed;
      button.textContent = "Insert into document";
      button.setAttribute("data-testid", "insert-reply");
      button.addEventListener("click", () => insertReply(message));
      item.appendChild(button);
    }
    ui.messages.appendChild(item);
    ui.messages.scrollTop = ui.messages.scrollHeight;
    return true;
  }

  function showError(text, canRetry) {
    // The line is an alert: the same words set again at each retry would be said again.
    if (ui.error.textContent !== text) ui.error.textContent = text;
    ui.error.hidden = !text;
    ui.retry.hidden = !canRetry;
  }

  // The reply as the model writes it: the message sent and a growing reply, shown until the
  // stored pair replaces them (so "chat-message" is only ever a stored message).
  function showWriting(content) {
    clearWriting();
    const user = document.createElement("li");
    user.dataset.role = "user";
    user.setAttribute("data-testid", "chat-pending");
    user.textContent = content;
    const reply = document.createElement("li");
    reply.dataset.role = "assistant";
    reply.setAttribute("data-testid", "chat-writing");
    reply.setAttribute("aria-busy", "true");
    ui.messages.append(user, reply);
    return reply;
  }

  function clearWriting() {
    ui.messages.querySelectorAll("[data-testid=chat-pending], [data-testid=chat-writing]").forEach((item) => item.remove());
  }

  // One request for the reply; {status, answer} as a plain JSON answer would give them, or null
  // when the server could not be reached or the stream broke (the same client id asks again).
  async function ask(message) {
    const response = await fetch(boot.messagesUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_id: message.clientId, content: message.content, stream: true }),
    });
    if (!(response.headers.get("Content-Type") || "").startsWith("application/x-ndjson")) {
      return { status: response.status, answer: await response.json().catch(() => null) };
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let writing = null;
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      const lines = buffer.split("\n");
      buffer = lines.pop();
      for (const line of lines.filter(Boolean)) {
        const part = JSON.parse(line);
        if ("delta" in part) {
          writing.textContent += part.delta;
          ui.messages.scrollTop = ui.messages.scrollHeight;
        } else if (part.user && !part.assistant) {
          writing = showWriting(part.user.content);
        } else {
          return { status: part.error ? part.status : 200, answer: part };
        }
      }
      if (done) return null;
    }
  }

  async function send(message) {
    inFlight = message;
    outbox.save();
    busy = true;
    showError("", false);
    refresh();
    for (let attempt = 0; ; attempt += 1) {
      let response = null;
      let answer = null;
      try {
        const asked = await ask(message);
        if (asked) {
          response = { status: asked.status, ok: asked.status === 200 };
          answer = asked.answer;
        }
      } catch (error) {
        response = null;
      }
      clearWriting();
      if (response === null || response.status >= 500 && response.status !== 502 && response.status !== 504 || !answer) {
        // The server is restarting or unreachable: the message is kept; ask again.
        showError("Reconnecting… your message is kept and will be sent.", false);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
        continue;
      }
      busy = false;
      if (response.ok) {
        inFlight = null;
        addMessage(answer.user);
        log("chat-send", "user", { messageSeq: answer.user.seq });
        // Only the whole reply, once, and only when it is new here: the streamed pieces and
        // the writer's own message are not said (the list is no live region).
        if (addMessage(answer.assistant)) announce(`The assistant replied: ${answer.assistant.content}`);
        log("chat-receive", "api", { messageSeq: answer.assistant.seq });
        exchanges = answer.exchanges;
        owed = answer.owed;
        showError("", false);
        if (merged) mergeReply(answer.assistant);  // after: it may say why it was left out
        refresh();
        openOwed();
        placeFocus();
        return;
      }
      if (response.status === 409 && answer.pending_client_id) {
        // An earlier message of this session still waits for its reply: get that one first.
        inFlight = { clientId: answer.pending_client_id, content: message.content };
        message = inFlight;
        busy = true;
        continue;
      }
      // The message is stored and waits for its reply: the model failed (502/504) or was not
      // asked (429: a limit; a busy server's 503 is retried above). The same id asks again.
      const modelFailed = [429, 502, 504].includes(response.status);
      if (!modelFailed) {
        // Not stored (a rating is due, or the message was refused): give the text back.
        inFlight = null;
        ui.input.value = message.content;
        outbox.save();
      }
      if (response.status === 409 && answer.owed) {
        owed = answer.owed;
        refresh();
        openOwed();
        placeFocus();
        return; // sent again by the participant after the rating
      }
      // The model failed or the request was refused: say so (the server's line is calm).
      const cutOff = answer.cut_off === true; // the reply stopped mid-way; none was stored
      const detail = `${cutOff ? "cut off: " : ""}${answer.error || response.status}`;
      log("chat-fail", "api", { detail: detail.slice(0, 500) });
      showError(cutOff ? `The assistant's reply was cut off: ${answer.error}` : `The assistant did not answer: ${answer.error || response.status}`, modelFailed);
      refresh();
      placeFocus();
      return;
    }
  }

  function submitMessage(event) {
    event.preventDefault();
    const content = ui.input.value.trim();
    if (!content || inFlight || owed.length) return;
    ui.input.value = "";
    send({ clientId: newClientId(), content });
  }

  // -- the document pane ---------------------------------------------------------------------

  function onDocInput() {
    const now = ui.doc.value;
    const delta = window.StudyEditor.diff(lastDoc, now, ui.doc.selectionEnd);
    if (!delta) return;
    const refusal = window.StudyEditor.tooMuch(delta, lastDoc, now, boot);
    if (refusal) {
      ui.doc.value = lastDoc;  // back to the text the log holds
      showError(refusal, false);
      return;
    }
    lastDoc = now;
    const name = delta.ops.some((op) => "insert" in op) ? "text-insert" : "text-delete";
    log(name, "user", { textDelta: delta });
    refresh();
  }

  function insertReply(message) {
    if (outbox.full) return;
    const addition = (ui.doc.value && !ui.doc.value.endsWith("\n") ? "\n\n" : "") + message.content;
    const delta = window.StudyEditor.append(ui.doc.value, addition);
    // The limits of the participant's own edits hold for an inserted reply too (onDocInput).
    const refusal = window.StudyEditor.tooMuch(delta, ui.doc.value, ui.doc.value + addition, boot);
    if (refusal) {
      showError(refusal, false);
      return;
    }
    ui.doc.value += addition;
    lastDoc = ui.doc.value;
    log("chat-insert", "user", { messageSeq: message.seq });
    log("text-insert", "api", { textDelta: delta, messageSeq: message.seq });
    refresh();
  }

  function mergeReply(message) {
    if (outbox.full) return;  // the document no longer changes (atLimit)
    if (message.seq <= lastMergedSeq) return; // a resent message's stored reply, merged already
    lastMergedSeq = message.seq;
    const now = window.ChatMerge.merge(ui.doc.value, message.content);
    const delta = window.StudyEditor.diff(ui.doc.value, now, now.length);
    // A merge that would take the document past what the log or the finish takes is left out,
    // as an edit of the participant's would be: the reply stays in the conversation.
    const refusal = delta && window.StudyEditor.tooMuch(delta, ui.doc.value, now, boot);
    if (refusal) {
      showError(`The reply was not merged into the document: ${refusal}`, false);
      return;
    }
    // Logged like an inserted reply, so the document replays from the log as the pane showed it.
    log("chat-merge", "api", { messageSeq: message.seq });
    if (delta) {
      const name = delta.ops.some((op) => "insert" in op) ? "text-insert" : "text-delete";
      log(name, "api", { textDelta: delta, messageSeq: message.seq });
    }
    ui.doc.value = now;
    lastDoc = now;
    outbox.save();
  }

  // -- the blocking in-session survey (CollabLLM's periodic rating) --------------------------

  function openOwed() {
    window.ChatRating.open(owed, log);
  }

  async function submitRating(event) {
    event.preventDefault();
    const done = await window.ChatRating.submit(event.target, boot.surveysUrl);
    if (!done) return;
    log("survey-submit", "user", { surveyName: done.survey, occasion: done.occasion });
    owed = owed.filter((item) => !(item.survey === done.survey && item.occasion === done.occasion));
    refresh();
    openOwed();
    placeFocus();  // the panel just left hid the focused button: the next one, or the message box
  }

  // -- finishing ------------------------------------------------------------------------------

  async function finish() {
    busy = true;
    refresh();
    ui.finish.textContent = "Saving…";
    const complete = await outbox.drain();
    // An answer that never comes (a connection dropped without a word) is given up, so the
    // writer can press Finish again rather than wait on "Saving…" (finishing twice is safe).
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), FINISH_TIMEOUT_MS);
    const response = await fetch(boot.finishUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ last_seq: nextSeq - 1, pending: complete ? 0 : outbox.pending.length, document: ui.doc.value }),
      signal: controller.signal,
    }).catch(() => null);
    const answer = response ? await response.json().catch(() => null) : null;
    clearTimeout(timeout);
    if (response && response.ok && answer && answer.next) {
      outbox.forget();
      window.location.assign(answer.next);
      return;
    }
    busy = false;
    ui.finish.textContent = "Finish";
    showError((answer && answer.error) || "Could not finish; please try again.", false);
    refresh();
  }

  // Nothing more is logged or sent from this page: another tab of this browser claimed the
  // session (StudyEditor.claimTab), or the server stored other events under this page's next
  // numbers (409: another browser wrote the session). The participant is told why.
  function closePage(message) {
    closed = true;
    outbox.closed = true;
    ui.doc.readOnly = true;
    showError(message, false);
    refresh();
  }

  // The session has stored all it may ([session] max_events, max_bytes; Outbox.reachedLimit):
  // the document stops where the server's copy stops, and the participant finishes with it.
  // The conversation goes on (the server stores its messages), the document no longer changes.
  async function atLimit(message) {
    ui.doc.readOnly = true;
    const state = await loadState();
    ui.doc.value = state.document;
    lastDoc = state.document;
    nextSeq = state.next_seq;
    outbox.save();
    showError(`Your session has recorded as much as it can (${message}), so the document can no `
      + "longer change: it is saved as shown. You can finish when you are ready.", false);
    refresh();
  }

  // -- start ------------------------------------------------------------------------------------

  async function loadState() {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const response = await fetch(boot.stateUrl);
        if (response.ok) return await response.json();
        // The session left the chat (finished in another tab): the page's own address now
        // leads to the session's current step.
        if (response.status === 409) { window.location.reload(); return new Promise(() => {}); }
      } catch (error) {
        // the server is restarting: wait and ask again
      }
      showSaveState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
    }
  }

  async function start() {
    const saved = window.StudyEditor.readSaved(boot.sessionId);
    const state = await loadState();
    const pending = saved ? saved.pending : [];
    outbox = new window.StudyEditor.Outbox(boot.sessionId, boot.eventsUrl, pending, {
      onState: showSaveState,
      onClosed: (message) => {
        showSaveState("error");
        closePage(`Your latest changes were not saved: ${message}.`);
      },
      onFull: atLimit,
    });
    outbox.snapshot = snapshot;
    // This browser's copy is newer than the server's whenever it holds unsent edits.
    const doc = saved && typeof saved.doc === "string" ? saved.doc : state.document;
    nextSeq = Math.max(state.next_seq, saved && saved.nextSeq ? saved.nextSeq : 0,
      ...pending.map((record) => record.seq + 1));
    ui.doc.value = doc;
    lastDoc = doc;
    if (saved && Number.isInteger(saved.lastMergedSeq)) lastMergedSeq = saved.lastMergedSeq;
    else if (merged) lastMergedSeq = Math.max(-1, ...state.messages.map((m) => m.seq));
    ui.doc.readOnly = merged;
    ui.doc.dataset.ready = "true";
    state.messages.forEach(addMessage);
    exchanges = state.exchanges;
    owed = state.owed;
    if (nextSeq === 0) log("system-initialize", "api");
    else outbox.save();
    outbox.schedule(0);
    if (!merged) ui.doc.addEventListener("input", onDocInput);
    ui.form.addEventListener("submit", submitMessage);
    ui.retry.addEventListener("click", () => { if (inFlight) send(inFlight); });
    ui.finish.addEventListener("click", finish);
    document.querySelectorAll(".rating-panel form").forEach((form) => form.addEventListener("submit", submitRating));
    document.querySelectorAll("[data-role=finish-instead]").forEach((button) => button.addEventListener("click", finish));
    window.addEventListener("blur", () => log("window-blur", "user"));
    window.addEventListener("focus", () => log("window-focus", "user"));
    window.addEventListener("pagehide", () => outbox.beacon());
    window.StudyEditor.claimTab(boot.sessionId, () => {
      if (!closed) closePage("This session is open in another tab or window; please continue there.");
    });
    refresh();
    openOwed();
    // A message sent before a reload or a server restart and never answered: ask again.
    const resend = saved && saved.inFlight ? saved.inFlight : null;
    // Sending it again is harmless: the server keeps one copy per client id.
    if (state.pending_client_id) {
      send({ clientId: state.pending_client_id, content: resend ? resend.content : "(resent)" });
    } else if (resend) {
      send(resend);
    }
  }

  start();
})();
