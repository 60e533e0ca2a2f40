// The writing page's minimum-time timer and its finish: everything the writer logged is sent
// first (the outbox drains), then the server is asked to end the writing stage and names the
// next page. Loaded before editor.js, which owns the page's state and calls these.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const FINISH_TIMEOUT_MS = 20000;

  // Counts down [session] min_seconds (less what the session has spent already); `whenDone` runs
  // once the writer may finish.
  StudyEditor.startTimer = function (boot, timerLabel, whenDone) {
    const deadline = performance.now() + Math.max(0, boot.minSeconds - boot.elapsedSeconds) * 1000;
    const tick = () => {
      const left = Math.ceil((deadline - performance.now()) / 1000);
      if (left > 0) {
        const minutes = Math.floor(left / 60);
        timerLabel.textContent = `Minimum time left: ${minutes}:${String(left % 60).padStart(2, "0")}`;
        setTimeout(tick, 250);
      } else {
        timerLabel.textContent = "You may finish now";
        timerLabel.dataset.done = "true";
        whenDone();
      }
    };
    tick();
  };

  // Drains the outbox and asks `finishUrl` to end the writing stage, retrying while the server
  // is away or busy (409, 5xx). On success the page moves on and this never returns; otherwise
  // it resolves to "log-refused" (some of the log was not accepted) or "refused" (the server
  // will not finish now), after saying why.
  StudyEditor.finishWriting = async function (finishUrl, { outbox, log, documentText, say }) {
    for (let attempt = 1; ; attempt += 1) {
      say("Saving your text…");
      if (!(await outbox.drain())) {
        say("Some of your log was not accepted by the server; please tell the researchers.", "error");
        return "log-refused";
      }
      let response = null;
      let answer = null;
      // A request that never gets an answer (a connection dropped without a word, a proxy
      // holding it) is given up and sent again, as the outbox's are: the writer would wait on
      // "Saving your text…" for as long as the browser keeps it open. Finishing twice is safe:
      // a session past writing is answered with its next page.
      const controller = new AbortController();
      const timeout = setTimeout(() => controller.abort(), FINISH_TIMEOUT_MS);
      try {
        response = await fetch(finishUrl, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          // drain() succeeded, so nothing is left unsent: pending is 0 (see finish_writing).
          body: JSON.stringify({ last_seq: log.lastSeq, text: documentText(), pending: 0 }),
          signal: controller.signal,
        });
        answer = await response.json().catch(() => null);
      } catch (error) {
        response = null;  // an answer cut off while its body was read is no answer
        say("Cannot reach the server; trying again…", "warn");
      } finally {
        clearTimeout(timeout);
      }
      if (response && response.ok && answer && answer.next) {
        outbox.forget();
        window.location.assign(answer.next);
        return new Promise(() => {});  // the page is going; the writer stays finishing
      }
      if (response && response.status !== 409 && response.status < 500) {
        say(`Cannot finish: ${(answer && answer.error) || `HTTP ${response.status}`}`, "error");
        return "refused";
      }
      if (response) say(`${(answer && answer.error) || `HTTP ${response.status}`}; trying again…`, "warn");
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * attempt, 5000)));
    }
  };
})(window.StudyEditor);
