// Suggestions: asking the server for them, and the popup under the caret that shows them.
//
// Paper §4.2.2-4.2.3: Tab asks for suggestions, shown in a small list below the cursor; up and
// down arrows choose, Enter or a click accepts (the text goes at the END of the document),
// Esc, any other key or a click outside dismisses; Shift+Tab shows the last list again.
// This file only talks to the server and draws; editor-tab.js decides what is logged when.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const REQUEST_TIMEOUT_MS = 20000;

  // -- the request -----------------------------------------------------------------------------

  // Resolves {suggestions} or {error}: a failure is an answer too, logged as suggestion-fail.
  // `waitMs`: how long the server lets the model take, and a little more (the boot data's
  // suggestionsWaitMs, from [suggestions] timeout_seconds).
  async function fetchSuggestions(url, doc, onScreen, waitMs) {
    const wait = waitMs || REQUEST_TIMEOUT_MS;
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), wait);
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ doc, on_screen: onScreen }),
        signal: controller.signal,
      });
      const answer = await response.json().catch(() => null);
      if (!response.ok) {
        return { error: (answer && answer.error) || `the server answered HTTP ${response.status}` };
      }
      if (!answer || !Array.isArray(answer.suggestions)) {
        return { error: "the server's answer holds no suggestions" };
      }
      return { suggestions: answer.suggestions };
    } catch (error) {
      return {
        error: error.name === "AbortError"
          ? `no answer within ${Math.round(wait / 1000)} seconds`
          : "the server cannot be reached",
      };
    } finally {
      clearTimeout(timeout);
    }
  }

  // -- where the caret is ------------------------------------------------------------------

  // A textarea does not tell where its caret is drawn. A hidden copy of it (same box, font and
  // wrapping) holding the text up to the caret, then a marker, does: the marker's offset.
  const MIRRORED = [
    "boxSizing", "width", "paddingTop", "paddingRight", "paddingBottom", "paddingLeft",
    "borderTopWidth", "borderRightWidth", "borderBottomWidth", "borderLeftWidth", "borderStyle",
    "fontFamily", "fontSize", "fontStyle", "fontVariant", "fontWeight", "fontStretch",
    "lineHeight", "letterSpacing", "wordSpacing", "textIndent", "textTransform", "tabSize",
    "direction", "textAlign",
  ];

  // The caret's top-left corner relative to the textarea's border box, and the line height.
  function caretPosition(textarea, index) {
    const style = window.getComputedStyle(textarea);
    const mirror = document.createElement("div");
    for (const property of MIRRORED) mirror.style[property] = style[property];
    Object.assign(mirror.style, {
      position: "absolute", visibility: "hidden", top: "0", left: "-9999px", overflow: "hidden",
      whiteSpace: "pre-wrap", overflowWrap: "break-word", wordWrap: "break-word", height: "auto",
      // The textarea's scrollbar narrows the text; the mirror has none.
      boxSizing: "content-box",
      width: `${textarea.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)}px`,
    });
    mirror.textContent = textarea.value.slice(0, index);
    const marker = document.createElement("span");
    marker.textContent = textarea.value.slice(index) || ".";
    mirror.appendChild(marker);
    document.body.appendChild(mirror);
    const lineHeight = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
    const position = {
      top: marker.offsetTop + parseFloat(style.borderTopWidth) - textarea.scrollTop,
      left: marker.offsetLeft + parseFloat(style.borderLeftWidth) - textarea.scrollLeft,
      lineHeight,
    };
    document.body.removeChild(mirror);
    return position;
  }

  // -- the popup -------------------------------------------------------------------------------

  // The list element from writing.html; `handlers.hover(i)` and `handlers.choose(i)`.
  class Popup {
    constructor(list, textarea, handlers) {
      this.list = list;
      this.textarea = textarea;
      this.items = [];
      this.highlighted = 0;
      // Keep the focus (and the caret) in the textarea when an item is clicked.
      list.addEventListener("mousedown", (event) => event.preventDefault());
      list.addEventListener("click", (event) => {
        const item = event.target.closest("[data-position]");
        if (item) handlers.choose(Number(item.dataset.position));
      });
      // A hover is the writer moving the pointer onto an item. A list appearing under a
      // pointer at rest also makes the browser send mouse events; those are not logged.
      this.hovered = null;
      let pointer = null;
      let pointerMoved = false;
      document.addEventListener("mousemove", (event) => {
        pointerMoved = !pointer || pointer[0] !== event.screenX || pointer[1] !== event.screenY;
        pointer = [event.screenX, event.screenY];
      }, true);
      list.addEventListener("mousemove", (event) => {
        const item = event.target.closest("[data-position]");
        if (!pointerMoved || !item || item === this.hovered) return;
        this.hovered = item;
        handlers.hover(Number(item.dataset.position));
      });
      list.addEventListener("mouseleave", () => { this.hovered = null; });
    }

    get isOpen() {
      return !this.list.hidden;
    }

    show(items, highlighted) {
      this.items = items;
      this.hovered = null;
      this.list.replaceChildren(...items.map((item, position) => {
        const option = document.createElement("li");
        option.id = `suggestion-${position}`;
        option.className = "suggestion";
        option.setAttribute("role", "option");
        option.dataset.testid = "suggestion";
        option.dataset.position = String(position);
        option.textContent = item.trimmed || item.original;
        return option;
      }));
      this.list.hidden = false;
      this.highlight(highlighted);
      this.place();
    }

    hide() {
      this.list.hidden = true;
      this.list.replaceChildren();
      this.textarea.removeAttribute("aria-activedescendant");
    }

    highlight(position) {
      this.highlighted = Math.max(0, Math.min(position, this.items.length - 1));
      for (const option of this.list.children) {
        const on = Number(option.dataset.position) === this.highlighted;
        option.setAttribute("aria-selected", on ? "true" : "false");
        if (on) {
          this.textarea.setAttribute("aria-activedescendant", option.id);
          option.scrollIntoView({ block: "nearest" });
        }
      }
    }

    // Under the caret's line, inside the editor's width; above the line when there is no room
    // below it in the window.
    place() {
      if (!this.isOpen) return;
      const textarea = this.textarea;
      const caret = caretPosition(textarea, textarea.selectionEnd);
      const wrap = this.list.offsetParent || textarea.parentElement;
      const width = wrap.clientWidth;
      const listWidth = this.list.offsetWidth;
      const lineTop = textarea.offsetTop + Math.max(0, Math.min(caret.top, textarea.clientHeight));
      const left = Math.max(0, Math.min(textarea.offsetLeft + caret.left, width - listWidth));
      let top = lineTop + caret.lineHeight + 4;
      const wrapBox = wrap.getBoundingClientRect();
      const roomBelow = window.innerHeight - (wrapBox.top + top);
      if (roomBelow < this.list.offsetHeight && wrapBox.top + lineTop - 4 > this.list.offsetHeight) {
        top = lineTop - this.list.offsetHeight - 4;
      }
      this.list.style.left = `${left}px`;
      this.list.style.top = `${top}px`;
    }
  }

  StudyEditor.fetchSuggestions = fetchSuggestions;
  StudyEditor.caretPosition = caretPosition;
  StudyEditor.Popup = Popup;
})(window.StudyEditor);
