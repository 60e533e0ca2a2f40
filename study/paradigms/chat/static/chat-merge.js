// The chat page's running document ([chat] document_pane = "merged", the default): CollabLLM's
// page merged the assistant's text into a document the participant saw (App. E). The rule is
// stated, and applied by `study simulate`, in study/paradigms/chat/merge.py: keep both the same.
// Loaded before chat.js, which calls ChatMerge.merge on each reply.
"use strict";

(function () {
  function wordCount(text) {
    const words = text.trim().split(/\s+/);
    return text.trim() ? words.length : 0;
  }

  function draftOf(reply) {
    return reply.split(/\n\s*\n/).map((part) => part.trim())
      .filter((part) => part && !/[?:]["'”’)]*$/.test(part)).join("\n\n");
  }

  function merge(doc, reply) {
    const draft = draftOf(reply);
    if (!draft) return doc;
    if (!doc.trim() || wordCount(draft) * 2 >= wordCount(doc)) return draft;
    return `${doc.replace(/\s+$/, "")}\n\n${draft}`;
  }

  window.ChatMerge = { merge, wordCount };
})();
