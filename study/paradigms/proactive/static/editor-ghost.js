// Ghost text and span tracking for the proactive paradigms (MindCopilot L1-L3).
//
// Ghost text is drawn by a layer over the textarea, never put into it: the document (and so
// the log's replay) holds a suggestion only once the writer accepts it (spec C2.2). The layer
// copies the textarea's box, font and wrapping and holds the writer's text in transparent ink,
// then the suggestion in grey, so the suggestion starts exactly at the caret and wraps like
// the text would. editor-proactive.js decides when it shows; this file only draws and maps.
"use strict";

window.StudyEditor = window.StudyEditor || {};

(function (StudyEditor) {
  const COPIED = [
    "paddingTop", "paddingRight", "paddingBottom", "paddingLeft",
    "borderTopWidth", "borderRightWidth", "borderBottomWidth", "borderLeftWidth", "borderStyle",
    "fontFamily", "fontSize", "fontStyle", "fontVariant", "fontWeight", "fontStretch",
    "lineHeight", "letterSpacing", "wordSpacing", "textIndent", "textTransform", "tabSize",
    "direction", "textAlign",
  ];

  class GhostLayer {
    constructor(textarea) {
      this.textarea = textarea;
      this.layer = document.createElement("div");
      this.layer.className = "ghost-layer";
      this.layer.setAttribute("aria-hidden", "true");
      this.written = document.createTextNode("");
      this.ghost = document.createElement("span");
      this.ghost.className = "ghost";
      this.ghost.dataset.testid = "suggestion-ghost";
      this.layer.append(this.written, this.ghost);
      this.layer.hidden = true;
      textarea.parentElement.appendChild(this.layer);
      textarea.addEventListener("scroll", () => this.place());
      window.addEventListener("resize", () => this.place());
    }

    get isShown() {
      return !this.layer.hidden;
    }

    get text() {
      return this.isShown ? this.ghost.textContent : "";
    }

    show(text) {
      this.ghost.textContent = text;
      this.layer.hidden = false;
      this.place();
      // A suggestion past the bottom of the box is no use unseen.
      const box = this.textarea;
      const bottom = this.ghost.offsetTop + this.ghost.offsetHeight;
      if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight + 8;
      this.place();
    }

    hide() {
      this.layer.hidden = true;
      this.ghost.textContent = "";
    }

    place() {
      if (!this.isShown) return;
      const textarea = this.textarea;
      const style = window.getComputedStyle(textarea);
      for (const property of COPIED) this.layer.style[property] = style[property];
      const padX = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
      const padY = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
      Object.assign(this.layer.style, {
        left: `${textarea.offsetLeft}px`,
        top: `${textarea.offsetTop}px`,
        width: `${textarea.clientWidth - padX}px`,   // the scrollbar narrows the text
        height: `${textarea.clientHeight - padY}px`,
      });
      this.written.textContent = textarea.value.slice(0, textarea.selectionEnd);
      this.layer.scrollTop = textarea.scrollTop;
    }
  }

  // -- where spans go when the text changes --------------------------------------------------

  // The edits of a Quill delta as [position, inserted text, deleted count], positions in the
  // text as it is when that edit happens (ops apply left to right).
  function edits(delta) {
    const out = [];
    let position = 0;
    for (const op of delta.ops) {
      if (op.retain !== undefined) position += op.retain;
      else if (op.insert !== undefined) { out.push([position, op.insert, 0]); position += op.insert.length; }
      else if (op.delete !== undefined) out.push([position, "", op.delete]);
    }
    return out;
  }

  // A tracked span {start, end} after one edit. `touched` is true when the edit changes text
  // strictly inside the span or deletes part of it; typing right before or right after an
  // accepted suggestion is writing on, not modifying it.
  function mapSpan(span, position, inserted, deleted) {
    let { start, end } = span;
    let touched = false;
    if (inserted) {
      if (position <= start) { start += inserted.length; end += inserted.length; }
      else if (position < end) { end += inserted.length; touched = true; }
    }
    if (deleted) {
      const stop = position + deleted;
      if (stop > start && position < end) touched = true;
      const cut = (p) => (p <= position ? p : p >= stop ? p - deleted : position);
      start = cut(start);
      end = cut(end);
    }
    return { start, end, touched };
  }

  // An anchored position (a rejected suggestion, a deleted text) after one edit.
  function mapPoint(point, position, inserted, deleted) {
    if (inserted && position < point) return point + inserted.length;
    if (deleted && position < point) return Math.max(position, point - deleted);
    return point;
  }

  StudyEditor.GhostLayer = GhostLayer;
  StudyEditor.deltaEdits = edits;
  StudyEditor.mapSpan = mapSpan;
  StudyEditor.mapPoint = mapPoint;
})(window.StudyEditor);
