// The chat study's pre-writing page (CollabLLM App. E step 2): "Remove" clears and hides one of
// the intent's questions; "Add New Question" reveals the next row for a question of the
// participant's own. Without this script every row is simply shown; the server's rules are
// the same either way (study/server/chat.py).
"use strict";

(function () {
  const form = document.querySelector("form.survey");
  if (!form) return;

  // The next place to write after a question removed: the hidden button took the focus with
  // it, and a keyboard user would start again from the top of the page.
  const nextField = (fieldset) => {
    const fields = Array.from(form.querySelectorAll("textarea, input:not([type=hidden]), button"));
    const after = fields.filter((field) => fieldset.compareDocumentPosition(field) & Node.DOCUMENT_POSITION_FOLLOWING);
    return after.find((field) => field.offsetParent !== null);
  };

  form.querySelectorAll("fieldset[data-question^=q]").forEach((fieldset) => {
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "Remove";
    // Every row's button reads "Remove": a screen reader names the question it removes.
    const legend = fieldset.querySelector("legend");
    remove.setAttribute("aria-label", `Remove the question: ${legend ? legend.textContent.replace("(required)", "").replace(/\s+/g, " ").trim() : ""}`);
    remove.className = "remove-question";
    remove.setAttribute("data-testid", "remove-question");
    remove.addEventListener("click", () => {
      fieldset.querySelector("textarea").value = "";
      fieldset.hidden = true;
      const next = nextField(fieldset);
      if (next) next.focus();
    });
    fieldset.appendChild(remove);
  });

  const rows = Array.from(form.querySelectorAll("[data-own-row]"));
  const filled = (row) => Array.from(row.querySelectorAll("input, textarea")).some((field) => field.value.trim());
  const add = document.getElementById("add-question");
  // Rows already filled in (after a refused submit) stay; the rest wait for "Add New Question".
  rows.forEach((row) => { row.hidden = !filled(row); });
  function update() {
    add.hidden = !rows.some((row) => row.hidden);
  }
  add.addEventListener("click", () => {
    const next = rows.find((row) => row.hidden);
    if (next) {
      next.hidden = false;
      next.querySelector("input").focus();
    }
    update();
  });
  update();
})();
