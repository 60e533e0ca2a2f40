// The chat page's blocking in-session survey (CollabLLM's periodic rating; survey placement
// "in_session", study/survey/placement.py): after every few exchanges the chat waits until the
// participant has rated it. Loaded before chat.js, which keeps the list of ratings owed.
"use strict";

(function () {
  // Shows the panel of the first survey `owed` (hiding the others) and logs that it opened.
  function open(owed, log) {
    document.querySelectorAll(".rating-panel").forEach((panel) => { panel.hidden = true; });
    if (!owed.length) return;
    const { survey, occasion } = owed[0];
    const panel = document.querySelector(`.rating-panel[data-panel="${CSS.escape(survey)}"]`);
    if (!panel) return;
    const form = panel.querySelector("form");
    form.reset();
    form.querySelectorAll("input[type=range]").forEach((slider) => window.StudySurvey.untouch(slider));
    form.dataset.occasion = String(occasion);
    panel.hidden = false;
    panel.scrollIntoView({ block: "nearest" });
    log("survey-open", "api", { surveyName: survey, occasion });
  }

  // Sends `form`'s answers to the in-session survey API; resolves to {survey, occasion} once
  // they are stored, or null after showing the participant why not.
  async function submit(form, surveysUrl) {
    const survey = form.dataset.survey;
    const occasion = Number(form.dataset.occasion);
    const error = form.querySelector("[data-role=panel-error]");
    const unmoved = window.StudySurvey.unmoved(form);
    if (unmoved) {
      error.textContent = unmoved;
      error.hidden = false;
      // Back to the slider to move, not left on the button (said as "not rated yet", survey.js).
      const slider = form.querySelector("fieldset[data-required]:not([hidden]) input[type=range]:not([name])");
      if (slider) slider.focus();
      return null;
    }
    let response;
    let answer = null;
    try {
      response = await fetch(`${surveysUrl}${encodeURIComponent(survey)}/${occasion}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ answers: window.StudySurvey.collect(form) }),
      });
      answer = await response.json().catch(() => null);
    } catch (failure) {
      response = null;
    }
    if (!response || !response.ok) {
      error.textContent = (answer && answer.error) || "Could not save your rating; please try again.";
      error.hidden = false;
      return null;
    }
    error.hidden = true;
    return { survey, occasion };
  }

  window.ChatRating = { open, submit };
})();
