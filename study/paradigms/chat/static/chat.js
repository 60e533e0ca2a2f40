// The chat study's page (templates/chat/chat.html; CollabLLM App. E step 3): what the page
// holds (the exchanges, the ratings owed, the message in flight), what the participant may
// press, the log, what a message's answer means, finishing and the start.
//
// The conversation lives on the server (study/paradigms/chat/api.py). The page's events go
// through the editor's outbox (editor-outbox.js): kept in localStorage until the server
// acknowledges them, so a reload or a killed server loses nothing. Event names:
// schemas/chat-event-batch.schema.json. Loaded last, after chat-merge.js (the running
// document's rule), chat-rating.js (the blocking periodic rating), chat-messages.js (the
// conversation as shown), chat-send.js (a message's way to the server and back, its reply
// streamed) and chat-document.js (the document pane).
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
  const FINISH_TIMEOUT_MS = 20000;  // a finish request given up after this (see finish)

  let outbox = null;
  let pane = null;  // ChatDocument, once the session's text is known
  let nextSeq = 0;
  let exchanges = 0;
  let owed = [];
  let inFlight = null; // {clientId, content}: a message sent and not yet answered
  let busy = false;
  let closed = false; // another tab or browser took the session: this page logs and sends no more
  const merged = boot.documentPane !== "edited";  // [chat] document_pane
  const conversation = window.ChatMessages(ui.messages, ui.announcer);

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
    return { doc: ui.doc.value, nextSeq, inFlight, lastMergedSeq: pane.lastMergedSeq() };
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

  // Shows a stored message, with its "Insert into document" button when the pane is edited.
  function addMessage(message) {
    return conversation.add(message, merged ? null : { disabled: closed, onClick: (reply) => pane.insertReply(reply) });
  }

  function showError(text, canRetry) {
    // The line is an alert: the same words set again at each retry would be said again.
    if (ui.error.textContent !== text) ui.error.textContent = text;
    ui.error.hidden = !text;
    ui.retry.hidden = !canRetry;
  }

  async function send(message) {
    inFlight = message;
    outbox.save();
    busy = true;
    showError("", false);
    refresh();
    const replied = await window.ChatSend.reply(boot.messagesUrl, message, conversation, {
      reconnecting: (text) => showError(text, false),
      // An earlier message of this session still waits for its reply: that one is asked first.
      askingFor: (earlier) => { inFlight = earlier; },
    });
    const { status, answer } = replied;
    busy = false;
    if (status === 200) {
      inFlight = null;
      addMessage(answer.user);
      log("chat-send", "user", { messageSeq: answer.user.seq });
      // Only the whole reply, once, and only when it is new here: the streamed pieces and
      // the writer's own message are not said (the list is no live region).
      if (addMessage(answer.assistant)) conversation.announce(`The assistant replied: ${answer.assistant.content}`);
      log("chat-receive", "api", { messageSeq: answer.assistant.seq });
      exchanges = answer.exchanges;
      owed = answer.owed;
      showError("", false);
      if (merged) pane.mergeReply(answer.assistant);  // after: it may say why it was left out
      refresh();
      openOwed();
      placeFocus();
      return;
    }
    // The message is stored and waits for its reply: the model failed (502/504) or was not
    // asked (429: a limit; a busy server's 503 is asked again by ChatSend.reply). The same id
    // asks again.
    const modelFailed = [429, 502, 504].includes(status);
    if (!modelFailed) {
      // Not stored (a rating is due, or the message was refused): give the text back.
      inFlight = null;
      ui.input.value = replied.message.content;
      outbox.save();
    }
    if (status === 409 && answer.owed) {
      owed = answer.owed;
      refresh();
      openOwed();
      placeFocus();
      return; // sent again by the participant after the rating
    }
    // The model failed or the request was refused: say so (the server's line is calm).
    const cutOff = answer.cut_off === true; // the reply stopped mid-way; none was stored
    const detail = `${cutOff ? "cut off: " : ""}${answer.error || status}`;
    log("chat-fail", "api", { detail: detail.slice(0, 500) });
    showError(cutOff ? `The assistant's reply was cut off: ${answer.error}` : `The assistant did not answer: ${answer.error || status}`, modelFailed);
    refresh();
    placeFocus();
  }

  function submitMessage(event) {
    event.preventDefault();
    const content = ui.input.value.trim();
    if (!content || inFlight || owed.length) return;
    ui.input.value = "";
    send({ clientId: window.ChatSend.newClientId(), content });
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
    pane.begin(state.document);
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
      await new Promise((resolve) => setTimeout(resolve, window.ChatSend.retryWait(attempt)));
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
    pane = window.ChatDocument(ui.doc, boot, { outbox, log, showError, refresh });
    outbox.snapshot = snapshot;
    // This browser's copy is newer than the server's whenever it holds unsent edits.
    const doc = saved && typeof saved.doc === "string" ? saved.doc : state.document;
    nextSeq = Math.max(state.next_seq, saved && saved.nextSeq ? saved.nextSeq : 0,
      ...pending.map((record) => record.seq + 1));
    // The last reply merged into the running document: this browser's note, else every reply
    // the server stored (a fresh page's document holds them all).
    let mergedSeq;
    if (saved && Number.isInteger(saved.lastMergedSeq)) mergedSeq = saved.lastMergedSeq;
    else if (merged) mergedSeq = Math.max(-1, ...state.messages.map((m) => m.seq));
    pane.begin(doc, mergedSeq);
    ui.doc.readOnly = merged;
    ui.doc.dataset.ready = "true";
    state.messages.forEach(addMessage);
    exchanges = state.exchanges;
    owed = state.owed;
    if (nextSeq === 0) log("system-initialize", "api");
    else outbox.save();
    outbox.schedule(0);
    if (!merged) ui.doc.addEventListener("input", pane.onInput);
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
    // The platform's last minutes (submit-clock.js): said to a screen reader as they begin, and
    // on the page's alert line when they have run out.
    window.StudyEditor.startSubmitClock(boot, $("submit-clock"),
      (message, tone) => (tone === "error" ? showError(message, false) : conversation.announce(message)));
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
