// The outbox: every event is kept in this browser until the server acknowledges it.
//
// The saved state (localStorage, one key per session) holds the unacknowledged events together
// with the document, the caret and the suggestion state they lead to, written in one go after
// each event. So a reload, a crash or a server restart loses nothing: the page restores the
// text from it and resends the events, and the server stores each (session, seq) once
// (study/store/events.py), so a resend is harmless.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const SEND_DELAY_MS = 1000;      // send a batch at most this long after an event...
  const SEND_AT_COUNT = 20;        // ...or at once when this many are waiting
  const MAX_BATCH = 50;            // catching up after an outage: a few events per request
  const REQUEST_TIMEOUT_MS = 10000;
  const RETRY_MS = [500, 1000, 2000, 4000, 5000];
  const BEACON_BYTES = 60000;      // browsers cap a beacon's body near 64 KB

  const storageKey = (sessionId) => `study.editor.v1.${sessionId}`;

  function readSaved(sessionId) {
    try {
      const raw = window.localStorage.getItem(storageKey(sessionId));
      const saved = raw ? JSON.parse(raw) : null;
      return saved && saved.sessionId === sessionId && Array.isArray(saved.pending) ? saved : null;
    } catch (error) {
      console.error("editor: the saved state of this session cannot be read", error);
      return null;
    }
  }

  class Outbox {
    // `ui.onState(state, message)`: "saved", "saving", "reconnecting" or "error";
    // `ui.onClosed(message)`: the server takes no more of this page's events (409);
    // `ui.onFull(message, seq)`: the session has stored all it may, up to `seq` (left out); the
    // page stops logging, and its promise settles once the page shows what is stored.
    constructor(sessionId, eventsUrl, pending, ui) {
      this.sessionId = sessionId;
      this.eventsUrl = eventsUrl;
      this.pending = pending;        // records not yet acknowledged, in seq order
      this.rejected = new Set();     // seqs the server refused (4xx); kept, skipped when sending
      this.ui = ui;
      this.snapshot = null;          // () => {doc, cursor, ...}: what is saved with the events
      this.timer = null;
      this.sending = null;
      this.failures = 0;
      this.batchLimit = MAX_BATCH;
      this.closed = false;           // another tab took over the session
      this.full = null;              // the session's limit was reached: the server's message
      this.fullShown = null;         // ui.onFull's promise
      this.storageWarned = false;
    }

    add(record) {
      if (this.full) return;  // never to be stored: the page no longer logs (ui.onFull)
      this.pending.push(record);
      this.save();
      if (!this.closed) this.ui.onState(this.failures ? "reconnecting" : "saving");
      this.schedule(this.unsent().length >= SEND_AT_COUNT ? 0 : SEND_DELAY_MS);
    }

    save() {
      if (this.closed || !this.snapshot) return;
      const state = { sessionId: this.sessionId, ...this.snapshot(), pending: this.pending };
      try {
        window.localStorage.setItem(storageKey(this.sessionId), JSON.stringify(state));
      } catch (error) {
        // Full or disabled storage: the events still live in this page and go to the server.
        // The copy saved before is now out of date: a reload would restore its older text and
        // number new events with seqs the server already stored (acknowledged as resends, so
        // dropped). Without it, a reload takes the server's copy (GET .../state).
        console.error("editor: cannot save in this browser", error);
        try {
          window.localStorage.removeItem(storageKey(this.sessionId));
        } catch (removeError) {
          console.error("editor: cannot remove the outdated saved copy", removeError);
        }
        if (!this.storageWarned) {
          this.storageWarned = true;
          this.ui.onState("error", "This browser cannot keep a copy of your text; please keep this page open.");
        }
      }
    }

    forget() {
      this.closed = true;
      // A browser that blocks storage (a third-party frame, as MTurk's, in a private window)
      // throws on reading localStorage at all: the writing is finished all the same, and the
      // page must go on to the next one.
      try {
        window.localStorage.removeItem(storageKey(this.sessionId));
        window.localStorage.removeItem(`${storageKey(this.sessionId)}.tab`);
      } catch (error) {
        console.error("editor: cannot remove the saved copy", error);
      }
    }

    unsent() {
      return this.pending.filter((record) => !this.rejected.has(record.seq));
    }

    // Milliseconds until the waiting events are due: SEND_DELAY_MS after the oldest was made, or
    // now when SEND_AT_COUNT wait. Not "at once after every answer": when a busy server answers
    // slowly, its writers would then send smaller batches more often, which slows it further
    // (docs/benchmarks.md); this way a writer posts about once a second however slow the
    // answers, and no event waits longer than it would have anyway.
    // Never more than SEND_DELAY_MS: the timestamp is the computer's clock, which may have been
    // set back since the event was made, and would then hold the events for as long as it moved.
    dueIn() {
      const unsent = this.unsent();
      if (unsent.length >= SEND_AT_COUNT) return 0;
      return Math.min(SEND_DELAY_MS, Math.max(0, unsent[0].eventTimestamp + SEND_DELAY_MS - Date.now()));
    }

    schedule(delay) {
      if (this.closed || this.sending) return;
      if (this.timer !== null) {
        if (delay > 0) return;
        clearTimeout(this.timer);
      }
      this.timer = setTimeout(() => {
        this.timer = null;
        this.send();
      }, delay);
    }

    // Send one batch; resolves when its answer is handled. Schedules the next one itself.
    send() {
      if (this.sending) return this.sending;
      const batch = this.unsent().slice(0, this.batchLimit);
      if (this.closed || batch.length === 0) {
        if (!this.closed && this.pending.length === 0) this.ui.onState("saved");
        return Promise.resolve();
      }
      this.ui.onState(this.failures ? "reconnecting" : "saving");
      this.sending = this.post(batch).finally(() => {
        this.sending = null;
        if (this.unsent().length > 0) {
          const wait = this.failures ? RETRY_MS[Math.min(this.failures, RETRY_MS.length) - 1] : this.dueIn();
          this.schedule(wait);
        } else if (this.pending.length === 0) {
          this.ui.onState("saved");
        }
      });
      return this.sending;
    }

    async post(batch) {
      const controller = new AbortController();
      const timeout = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
      let response;
      let answer = null;
      try {
        response = await fetch(this.eventsUrl, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ events: batch }),
          signal: controller.signal,
        });
        answer = await response.json().catch(() => null);
      } catch (error) {
        this.failed(`network: ${error}`);
        return;
      } finally {
        clearTimeout(timeout);
      }
      if (response.ok && answer && Array.isArray(answer.acked)) {
        const acked = new Set(answer.acked);
        this.pending = this.pending.filter((record) => !acked.has(record.seq));
        this.failures = 0;
        this.batchLimit = MAX_BATCH;
        this.save();
        return;
      }
      const message = (answer && answer.error) || `HTTP ${response.status}`;
      // Only the study server's own answers ({"acked"} or {"error"}) say what became of the
      // batch. A page from something on the way (a captive portal's login page the request was
      // redirected to, a proxy's error) or an answer cut off is no refusal: taken for one, its
      // events were set aside as refused, and the later ones sent edited a text the server
      // never had. The batch is sent again, as after a network error.
      const fromServer = answer !== null && typeof answer.error === "string";
      if (response.status >= 500 || response.status === 429 || response.status === 408
          || (!fromServer && response.status !== 413)) {
        this.failed(message);
      } else if (response.status === 409) {
        this.superseded(message);
      } else if (response.status === 422 && answer.full === true) {
        this.reachedLimit(batch, message);
      } else if (response.status === 413 && this.batchLimit > 1) {
        this.batchLimit = Math.max(1, Math.floor(batch.length / 2));
      } else {
        this.refused(batch, response.status, message, answer);
      }
    }

    failed(reason) {
      // The server is restarting or the network is down: keep everything, retry with backoff.
      this.failures += 1;
      console.warn(`editor: events not sent (${reason}); retrying`);
      this.ui.onState("reconnecting");
    }

    // 409: the session takes no more of this page's events. Another window or browser wrote
    // the events this page numbered next, or finished the session: this page's further edits
    // would land on a text it never showed. It stops, and its saved copy goes, so a reload
    // takes up the server's text instead of resending these events forever.
    superseded(message) {
      console.error(`editor: the server no longer takes this page's events: ${message}`);
      this.closed = true;
      try {
        window.localStorage.removeItem(storageKey(this.sessionId));
      } catch (error) {
        console.error("editor: cannot remove the saved copy", error);
      }
      this.ui.onClosed(message);
    }

    // 422 with `full`: the session has stored all it may ([session] max_events, max_bytes). The
    // events that still fit are stored one by one; from the first that does not, none ever will
    // be, and keeping them would keep the writer from finishing ("some of your log was not
    // accepted"). They are let go, and the page finishes with the text the server stored.
    reachedLimit(batch, message) {
      if (batch.length > 1) {
        this.batchLimit = 1;
        return;
      }
      const first = batch[0].seq;
      console.warn(`editor: the session is full from event ${first}: ${message}`);
      this.isFull(message, first);
    }

    // The session has stored all it may, up to `first` (left out): the events from it are let
    // go and the page shows what is stored (ui.onFull). Also at a page's start, when the server
    // says the session is full (a reload after its limit).
    isFull(message, first) {
      this.full = message;
      this.pending = this.pending.filter((record) => record.seq < first);
      this.fullShown = Promise.resolve(this.ui.onFull(message, first));
    }

    refused(batch, status, message, answer) {
      // A 4xx names a problem that resending the same batch cannot fix. Narrow it down to the
      // event at fault so the others still reach the server; that one stays saved here.
      console.error(`editor: the server refused ${batch.length} event(s): ${message}`, answer, batch);
      if (batch.length > 1) {
        this.batchLimit = 1;
      } else {
        this.rejected.add(batch[0].seq);
        this.batchLimit = MAX_BATCH;
      }
      this.ui.onState("error", `The server did not accept part of your log (${message}). Please tell the researchers.`);
    }

    // Send until nothing is waiting (finish button). Resolves false if some events are refused.
    async drain() {
      this.rejected.clear();
      for (;;) {
        if (this.closed) return false;
        if (this.full) {
          await this.fullShown;
          return this.pending.length === 0;
        }
        if (this.unsent().length === 0) return this.pending.length === 0;
        if (this.timer !== null) {
          clearTimeout(this.timer);
          this.timer = null;
        }
        await (this.sending || this.send());
        if (this.failures) {
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(this.failures, RETRY_MS.length) - 1]));
        }
      }
    }

    // The page is being hidden or closed: a best effort to get the events out. They stay
    // saved until a later answer acknowledges them.
    beacon() {
      if (this.closed || !navigator.sendBeacon) return;
      // The cap is on bytes: the body is sent as UTF-8, where a character of Chinese text
      // takes three (its JSON's length, in UTF-16 units, counts one).
      let batch = this.unsent().slice(0, MAX_BATCH * 4);
      let blob = new Blob([JSON.stringify({ events: batch })], { type: "application/json" });
      while (batch.length > 1 && blob.size > BEACON_BYTES) {
        batch = batch.slice(0, Math.ceil(batch.length / 2));
        blob = new Blob([JSON.stringify({ events: batch })], { type: "application/json" });
      }
      if (batch.length > 0) {
        navigator.sendBeacon(this.eventsUrl, blob);
      }
    }
  }

  // Two tabs of one session's page would number their events alike. The newest tab claims the
  // session; in every older one `onTaken` runs (it stops writing and saving, and says why).
  function claimTab(sessionId, onTaken) {
    const tabKey = `${storageKey(sessionId)}.tab`;
    const tabId = Math.random().toString(36).slice(2);
    try { window.localStorage.setItem(tabKey, tabId); } catch (error) { return; }
    window.addEventListener("storage", (event) => {
      if (event.key === tabKey && event.newValue !== tabId) onTaken();
    });
  }

  StudyEditor.readSaved = readSaved;
  StudyEditor.storageKey = storageKey;
  StudyEditor.claimTab = claimTab;
  StudyEditor.Outbox = Outbox;
})(window.StudyEditor);
