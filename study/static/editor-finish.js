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

  // The platform's own clock (MTurk's assignment time, Prolific's maximum time; absent for a lab
  // session): its last minutes are counted down beside the timer and their start and end said,
  // for the platform takes the work no later. Wall-clock time, as the server's deadline is: a
  // computer that slept meanwhile does not stop it.
  const SUBMIT_WARNING_SECONDS = 600;
  StudyEditor.startSubmitClock = function (boot, label, say) {
    if (typeof boot.submitSecondsLeft !== "number") return;
    const end = Date.now() + boot.submitSecondsLeft * 1000;
    let warned = false;
    const tick = () => {
      const left = Math.ceil((end - Date.now()) / 1000);
      if (left > SUBMIT_WARNING_SECONDS) {
        setTimeout(tick, Math.min(60, left - SUBMIT_WARNING_SECONDS) * 1000);
        return;
      }
      label.hidden = false;
      if (left > 0) {
        const minutes = Math.floor(left / 60);
        label.textContent = `Time left to submit: ${minutes}:${String(left % 60).padStart(2, "0")}`;
        if (!warned) {
          warned = true;
          const most = Math.ceil(left / 60);
          say(`The time to submit this task ends in ${most} minute${most === 1 ? "" : "s"} or less: `
            + "finish, answer the questions after the text and submit before then.");
        }
        setTimeout(tick, 1000);
      } else {
        label.textContent = "Time to submit has run out";
        say("The time to submit this task has run out, so it can no longer be submitted. Your "
          + "text is saved; please contact the researchers.", "error");
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
