// The chat page's document pane. Its edits are logged as the writing editor logs them
// (text-insert / text-delete with Quill deltas, StudyEditor.diff), whether the participant typed
// them ([chat] document_pane = "edited"), inserted a reply ("Insert into document") or the reply
// was merged into the running document ("merged", chat-merge.js's rule). Loaded before chat.js,
// which makes one of these once the session's starting text is known.
"use strict";

(function () {
  // `textarea`: the pane; `boot`: the page's (its edit limits, StudyEditor.tooMuch); `page`:
  // {outbox, log(eventName, eventSource, extra), showError(text, canRetry), refresh()}.
  window.ChatDocument = function (textarea, boot, { outbox, log, showError, refresh }) {
    let lastDoc = "";  // the text the log holds
    let lastMergedSeq = -1;  // the last reply merged into the running document

    // The text the pane starts from (or the server's copy at a limit), and the last reply
    // merged into it, where that is known.
    function begin(doc, mergedSeq) {
      textarea.value = doc;
      lastDoc = doc;
      if (mergedSeq !== undefined) lastMergedSeq = mergedSeq;
    }

    function onInput() {
      const now = textarea.value;
      const delta = window.StudyEditor.diff(lastDoc, now, textarea.selectionEnd);
      if (!delta) return;
      const refusal = window.StudyEditor.tooMuch(delta, lastDoc, now, boot);
      if (refusal) {
        textarea.value = lastDoc;  // back to the text the log holds
        showError(refusal, false);
        return;
      }
      lastDoc = now;
      const name = delta.ops.some((op) => "insert" in op) ? "text-insert" : "text-delete";
      log(name, "user", { textDelta: delta });
      refresh();
    }

    function insertReply(message) {
      if (outbox.full) return;
      const addition = (textarea.value && !textarea.value.endsWith("\n") ? "\n\n" : "") + message.content;
      const delta = window.StudyEditor.append(textarea.value, addition);
      // The limits of the participant's own edits hold for an inserted reply too (onInput).
      const refusal = window.StudyEditor.tooMuch(delta, textarea.value, textarea.value + addition, boot);
      if (refusal) {
        showError(refusal, false);
        return;
      }
      textarea.value += addition;
      lastDoc = textarea.value;
      log("chat-insert", "user", { messageSeq: message.seq });
      log("text-insert", "api", { textDelta: delta, messageSeq: message.seq });
      refresh();
    }

    function mergeReply(message) {
      if (outbox.full) return;  // the document no longer changes (atLimit)
      if (message.seq <= lastMergedSeq) return; // a resent message's stored reply, merged already
      lastMergedSeq = message.seq;
      const now = window.ChatMerge.merge(textarea.value, message.content);
      const delta = window.StudyEditor.diff(textarea.value, now, now.length);
      // A merge that would take the document past what the log or the finish takes is left out,
      // as an edit of the participant's would be: the reply stays in the conversation.
      const refusal = delta && window.StudyEditor.tooMuch(delta, textarea.value, now, boot);
      if (refusal) {
        showError(`The reply was not merged into the document: ${refusal}`, false);
        return;
      }
      // Logged like an inserted reply, so the document replays from the log as the pane showed it.
      log("chat-merge", "api", { messageSeq: message.seq });
      if (delta) {
        const name = delta.ops.some((op) => "insert" in op) ? "text-insert" : "text-delete";
        log(name, "api", { textDelta: delta, messageSeq: message.seq });
      }
      textarea.value = now;
      lastDoc = now;
      outbox.save();
    }

    return { begin, onInput, insertReply, mergeReply, lastMergedSeq: () => lastMergedSeq };
  };
})();
