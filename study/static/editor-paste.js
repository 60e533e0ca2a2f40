// Text from outside the editor ([session] outside_paste, issue 27 item 6). "refuse": a paste
// or drop of text the page never held is stopped, with a word to the writer; "flag": it goes
// in, and the log alone shows it (study/curation/origin.py reads a long insert of text the
// session never held as outside text). Text copied or cut inside the editor, or text the
// document already holds (the prompt, the writer's own sentences), may always be pasted.
// Loaded before editor.js, which calls StudyEditor.guardPastes once the editor is ready.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const REFUSED = "Pasting text from outside this page is turned off in this study: please write in your own words.";

  // `options`: { mode: "flag" | "refuse", minChars } from the page's boot data; `say(text,
  // tone)` writes the status line.
  StudyEditor.guardPastes = function (textarea, options, say) {
    const copied = [];  // what the writer copied or cut inside the editor, most recent last
    const remember = () => {
      const text = textarea.value.slice(textarea.selectionStart, textarea.selectionEnd);
      if (text) copied.push(text);
      if (copied.length > 50) copied.shift();
    };
    textarea.addEventListener("copy", remember);
    textarea.addEventListener("cut", remember);

    // Shorter than minChars reads as typing in origin.py too (an autocorrection, a word).
    const fromOutside = (text) => text.length >= options.minChars
      && !textarea.value.includes(text) && !copied.some((held) => held.includes(text))
      && !StudyEditor.offeredTexts.some((offered) => offered.includes(text.trim()));

    const check = (event, transfer) => {
      if (options.mode !== "refuse" || !transfer) return;
      if (fromOutside(transfer.getData("text/plain") || "")) {
        event.preventDefault();
        say(REFUSED, "error");
      }
    };
    textarea.addEventListener("paste", (event) => check(event, event.clipboardData));
    textarea.addEventListener("drop", (event) => check(event, event.dataTransfer));
  };
})(window.StudyEditor);
