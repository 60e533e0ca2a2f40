// The platform's own clock on a page where the participant writes (the editor, the chat): MTurk
// takes an assignment's work only until its time runs out, Prolific a submission until its
// maximum time, so the last minutes are counted down and their start and end said. Loaded
// before the page's own script, which calls it once the page is ready.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  // `boot.submitSecondsLeft`: absent for a lab session. The last ten minutes are shown in
  // `label`, and their start and end said through `say(message, tone)`. Wall-clock time, as the
  // server's deadline is: a computer that slept meanwhile does not stop it.
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

})(window.StudyEditor);
