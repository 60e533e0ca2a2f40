// The Tab suggestion list's part of the editor page (CoAuthor, paper §4.2): Tab asks for
// suggestions, the list opens under the caret, up and down choose, Enter or a click accepts,
// Esc or any other key hides it, Shift+Tab shows the last list again. Each step is a CoAuthor
// record (paper Table 1): suggestion-get, -open, -fail, -up, -down, -hover, -select, -close,
// -reopen, and the accepted text as an api text-insert at the end.
//
// Registers with the core's editor page (study/static/editor-parts.js); the request and the
// popup are editor-suggestions.js's. Started only when the boot data has suggestionsUrl
// (study/paradigms/tab/editor.py): a control arm's page has no list (study/control_arm.py).
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const MODIFIER_KEYS = new Set(["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock", "Fn"]);

  function start(boot, page, restored) {
    if (!boot.suggestionsUrl) return null;
    const { textarea, log } = page;
    // The last list shown, for Shift+Tab, kept with the text (the saved copy's lastSuggestions,
    // the server's last_suggestions).
    let lastSuggestions = restored.saved ? restored.saved.lastSuggestions || []
      : restored.server ? restored.server.last_suggestions || [] : [];
    // Each Tab asks the model, also before the last press's answer came, as CoAuthor did: it
    // logged a suggestion-get per press and opened each list that came, the newer over the older,
    // no close between (2f923aba events 68-72, c122541b 943-947 of the shared sample). Table 3's
    // queries count those opens (study.curation.metadata's num_query). Presses are numbered; an
    // older press's answer that comes after a newer press's list is neither shown nor logged.
    let asked = 0;    // Tab presses that asked, numbered from 1
    let answered = 0; // the newest press whose list was shown
    let waiting = 0;  // requests without an answer yet
    const maxShown = () => parseInt(boot.controls.currentN, 10) || 5;

    async function askForSuggestions() {
      if (page.closed()) return;
      const onScreen = popup.isOpen ? popup.items.map((item) => item.trimmed) : [];
      const press = ++asked;
      waiting += 1;
      page.record("suggestion-get", "user");
      // Then, as CoAuthor logged it (paper Table 2's query block: get, an api close or cursor
      // move, open): the list on screen closed by the editor, not dismissed by the writer (a
      // user close would read as a dismiss block), or the caret taken to the end, where the
      // list opens and an accepted suggestion goes (tests/browser/test_real_session_retyped.py).
      if (popup.isOpen) dismiss("api");
      else page.caretToEnd();
      page.busy(true);
      page.say("");
      // The model continues the writer's text, without Quill's final newline: in the CoAuthor
      // release a suggestion accepted after "." starts with a space, not a new paragraph.
      const answer = await StudyEditor.fetchSuggestions(boot.suggestionsUrl, textarea.value, onScreen,
        boot.suggestionsWaitMs);
      waiting -= 1;
      if (waiting === 0) page.busy(false);
      // Finished, or another tab took the session, while the model answered: a list accepted
      // here would put text in an editor that logs nothing more.
      if (page.closed()) return;
      // An older press's answer after a newer press's list: the writer keeps the newer one.
      if (press < answered) return;
      const items = answer.suggestions ? StudyEditor.cleanSuggestions(answer.suggestions).slice(0, maxShown()) : [];
      if (items.length === 0) {
        // Not every query is answered by a list (shared data README); the writer is told why,
        // once nothing else is on its way: a second press refused by the per-session limit
        // (429) while the first one's list is coming is logged, not said.
        page.record("suggestion-fail", "api");
        if (waiting > 0) return;
        page.say(answer.error
          ? `Could not get suggestions: ${answer.error}. Keep writing, or press Tab to try again.`
          : "No suggestions this time. Keep writing, or press Tab to try again.", "error");
        return;
      }
      answered = press;
      lastSuggestions = items;
      log.suggestionIndex = 0;
      page.record("suggestion-open", "api", { currentSuggestions: items });
      popup.show(items, 0);
      page.say(items.length === 1
        ? "1 suggestion. Enter to accept, Esc to hide."
        : `${items.length} suggestions. Up and down arrows to choose, Enter to accept, Esc to hide.`);
      sayHighlighted();
    }

    function reopen() {
      if (page.closed() || lastSuggestions.length === 0) return;
      page.record("suggestion-reopen", "user");
      popup.show(lastSuggestions, log.suggestionIndex);
      sayHighlighted();
    }

    // Past either end the highlight goes round, as CoAuthor's list did (a Down on the last item
    // took the first in all 5 of the shared sample), so Enter takes the item the writer sees.
    function move(step) {
      const count = popup.items.length;
      popup.highlight((popup.highlighted + step + count) % count);
      log.suggestionIndex = popup.highlighted;
      page.record(step < 0 ? "suggestion-up" : "suggestion-down", "user");
      sayHighlighted();
    }

    // The focus stays in the text while the arrows move the highlight (aria-activedescendant
    // on a textarea is read by few screen readers), so the highlighted item is said.
    function sayHighlighted() {
      const item = popup.items[popup.highlighted];
      if (item) page.announce(`${item.trimmed || item.original} (${popup.highlighted + 1} of ${popup.items.length})`);
    }

    function hover(position) {
      log.hoverIndex = position;
      page.record("suggestion-hover", "user");
    }

    function dismiss(source) {
      popup.hide();
      page.record("suggestion-close", source);
      if (page.tone() === "info") page.say("");
    }

    // Accepting: select (user), close (api), then the text goes at the end (paper §4.2.3).
    function accept(position) {
      const item = popup.items[position];
      if (!item || page.closed()) return;
      const refusal = page.tooMuch(item.original);
      if (refusal) {  // the list stays open: the writer may take a shorter one, or Esc
        page.say(refusal, "error");
        return;
      }
      // CoAuthor's select record has the chosen item as currentHoverIndex, also when it was
      // chosen by the arrows and Enter (all 284 selects of the shared sample; its
      // currentSuggestionIndex is not always it), so a reader of the release may take that
      // one: both name it here (tests/browser/test_real_session_retyped.py).
      log.suggestionIndex = position;
      log.hoverIndex = position;
      page.record("suggestion-select", "user");
      dismiss("api");
      page.insert(item.original);
      textarea.focus();
      page.keepCaretInView();
      page.say("");
    }

    function onKeyDown(event) {
      if (event.key === "Tab") {
        event.preventDefault();
        if (event.shiftKey) reopen();
        // A held key repeats its keydown: one press, one query (CoAuthor's presses before the
        // answer came 0.2 s apart at the closest, each a press of its own).
        else if (!event.repeat) askForSuggestions();
        return true;
      }
      if (!popup.isOpen) return false;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        move(event.key === "ArrowUp" ? -1 : 1);
      } else if (event.key === "Enter") {
        event.preventDefault();
        accept(popup.highlighted);
      } else if (event.key === "Escape") {
        event.preventDefault();
        dismiss("user");
      } else if (!MODIFIER_KEYS.has(event.key)) {
        dismiss("user");  // and the key does what it does: "continues to type" (§4.2.3)
      }
      return true;
    }

    const popup = new StudyEditor.Popup(document.getElementById("suggestions"), textarea, { hover, choose: accept });
    document.addEventListener("mousedown", (event) => {
      if (popup.isOpen && !popup.list.contains(event.target)) dismiss("user");
    });
    textarea.addEventListener("scroll", () => popup.place());
    window.addEventListener("resize", () => popup.place());

    return {
      onKeyDown,
      memory: () => ({ lastSuggestions }),
      onClose: () => popup.hide(),
      stop() {
        if (popup.isOpen) dismiss("user");
      },
    };
  }

  StudyEditor.register({ name: "tab", start });
})(window.StudyEditor);
