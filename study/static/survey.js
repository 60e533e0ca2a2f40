// Survey pages (study.survey): show-if rules that read a question on the same page, and
// sliders that only count as answered once moved. The server checks everything again; this
// only keeps the page honest while the participant fills it in.
"use strict";

window.StudySurvey = window.StudySurvey || {};

(function (StudySurvey) {
  function valuesOf(form, name) {
    const fields = form.querySelectorAll(`[name="${CSS.escape(name)}"]`);
    const values = [];
    fields.forEach((field) => {
      if ((field.type === "radio" || field.type === "checkbox") && !field.checked) return;
      if (field.value !== "") values.push(field.value);
    });
    return values;
  }

  function matches(rule, values) {
    if (!values.length) return false;
    if (rule.equals !== null && rule.equals !== undefined && !values.includes(String(rule.equals))) return false;
    if (rule.in && rule.in.length && !values.some((v) => rule.in.map(String).includes(v))) return false;
    const number = Number(values[0]);
    if (rule.at_least !== null && rule.at_least !== undefined && !(number >= rule.at_least)) return false;
    if (rule.at_most !== null && rule.at_most !== undefined && !(number <= rule.at_most)) return false;
    return true;
  }

  function refresh(form) {
    form.querySelectorAll("fieldset[data-show-if]").forEach((fieldset) => {
      const rule = JSON.parse(fieldset.dataset.showIf);
      const source = form.querySelector(`fieldset[data-question="${CSS.escape(rule.item)}"]`);
      if (!source) return; // decided on an earlier page, by the server
      // A hidden question's inputs keep what was ticked before it was hidden, but it has no
      // answer: the server neither keeps it nor shows what follows from it. Questions come
      // after the one they read, so `source` is settled already.
      fieldset.hidden = !matches(rule, source.hidden ? [] : valuesOf(form, rule.item));
    });
  }

  function bandOf(slider, value) {
    const fieldset = slider.closest("fieldset");
    const items = fieldset ? fieldset.querySelectorAll(".bands b") : [];
    for (const item of items) {
      // "from–to label" (templates/_survey_items.html); lazy between the numbers, so the minus
      // of a negative end ("-3–-1") stays with it.
      const match = /^(-?\d+)\D+?(-?\d+)\s+(.*)$/.exec(item.textContent.trim());
      if (match && value >= Number(match[1]) && value <= Number(match[2])) return match[3];
    }
    return "";
  }

  // What a slider's <output> says, which is also the slider's description
  // (templates/_survey_items.html): its value and band, or "not rated yet".
  function showValue(slider, text) {
    const shown = slider.parentElement.querySelector("output > span");
    if (shown) shown.textContent = text;
  }

  function touch(slider) {
    slider.name = slider.dataset.name;
    const band = bandOf(slider, Number(slider.value));
    showValue(slider, band ? `${slider.value} (${band})` : slider.value);
  }

  // A slider back to no answer (the chat page's rating panel, opened again for the next rating).
  StudySurvey.untouch = function (slider) {
    slider.removeAttribute("name");
    showValue(slider, "not rated yet");
  };

  // Wires one form (a survey page, or the chat page's blocking rating panel).
  StudySurvey.attach = function (form) {
    form.addEventListener("change", () => refresh(form));
    form.addEventListener("input", (event) => {
      if (event.target.matches("input[type=range]")) touch(event.target);
    });
    refresh(form);
  };

  // The sentence the server would answer for a required slider left unmoved
  // (study.survey.answers), said without a request: a refused request is an error in the
  // browser's console, and a participant's slip is not one.
  StudySurvey.unmoved = function (form) {
    for (const fieldset of form.querySelectorAll("fieldset[data-question][data-required]")) {
      if (fieldset.hidden || fieldset.dataset.type !== "slider") continue;
      const slider = fieldset.querySelector("input[type=range]");
      if (slider && !slider.name) return "Move the slider to give a rating.";
    }
    return null;
  };

  // What a form holds, as the in-session API takes it: id -> value (a list for checkboxes).
  StudySurvey.collect = function (form) {
    const answers = {};
    form.querySelectorAll("fieldset[data-question]").forEach((fieldset) => {
      if (fieldset.hidden) return;
      const id = fieldset.dataset.question;
      const values = valuesOf(form, id);
      answers[id] = fieldset.dataset.type === "multiple" ? values : (values[0] || "");
    });
    return answers;
  };

  document.querySelectorAll("form.survey").forEach((form) => StudySurvey.attach(form));
})(window.StudySurvey);
