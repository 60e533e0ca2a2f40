// The chat page's conversation as the participant sees it: the stored messages, the reply as
// the model writes it, and what a screen reader alone is told (the template's #announce).
// Loaded before chat-send.js and chat.js, which make one of these for the page's list.
"use strict";

(function () {
  // `list`: the page's message list; `announcer`: its screen-reader-only region.
  window.ChatMessages = function (list, announcer) {
    // Emptied first, so a reply the same as the one before is said again.
    let announcing = null;
    function announce(text) {
      clearTimeout(announcing);
      announcer.textContent = "";
      announcing = setTimeout(() => { announcer.textContent = text; }, 50);
    }

    // Shows a stored message; false when the list has it already. `insert`: null, or the
    // "Insert into document" button a reply gets ({disabled, onClick}; [chat] document_pane
    // = "edited").
    function add(message, insert) {
      if (list.querySelector(`li[data-seq="${message.seq}"]`)) return false;
      const item = document.createElement("li");
      item.dataset.role = message.role;
      item.dataset.seq = String(message.seq);
      item.setAttribute("data-testid", "chat-message");
      item.textContent = message.content;
      if (message.role === "assistant" && insert) {
        const button = document.createElement("button");
        button.type = "button";
        button.disabled = insert.disabled;
        button.textContent = "Insert into document";
        button.setAttribute("data-testid", "insert-reply");
        button.addEventListener("click", () => insert.onClick(message));
        item.appendChild(button);
      }
      list.appendChild(item);
      list.scrollTop = list.scrollHeight;
      return true;
    }

    // The reply as the model writes it: the message sent and a growing reply, shown until the
    // stored pair replaces them (so "chat-message" is only ever a stored message).
    function showWriting(content) {
      clearWriting();
      const user = document.createElement("li");
      user.dataset.role = "user";
      user.setAttribute("data-testid", "chat-pending");
      user.textContent = content;
      const reply = document.createElement("li");
      reply.dataset.role = "assistant";
      reply.setAttribute("data-testid", "chat-writing");
      reply.setAttribute("aria-busy", "true");
      list.append(user, reply);
      return reply;
    }

    // A piece of the reply being written (`writing`, from showWriting).
    function grow(writing, piece) {
      writing.textContent += piece;
      list.scrollTop = list.scrollHeight;
    }

    function clearWriting() {
      list.querySelectorAll("[data-testid=chat-pending], [data-testid=chat-writing]").forEach((item) => item.remove());
    }

    return { announce, add, showWriting, grow, clearWriting };
  };
})();
