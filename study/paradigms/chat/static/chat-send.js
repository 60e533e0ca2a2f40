// A chat message's way to the server and back (study/paradigms/chat/api.py). It carries a
// browser-made client id, so when an answer is lost (network, a restarted server) the same
// request is simply sent again and the server returns the stored reply instead of storing the
// message twice. The reply is streamed and shown as the model writes it (chat-messages.js).
// Loaded before chat.js, which decides what each answer means for the page.
"use strict";

(function () {
  const RETRY_MS = [500, 1000, 2000, 4000, 5000];
  // How long to wait before asking the server again, after `attempt` tries (from 0).
  const retryWait = (attempt) => RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)];

  function newClientId() {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // One request for the reply; {status, answer} as a plain JSON answer would give them, or null
  // when the server could not be reached or the stream broke (the same client id asks again).
  async function ask(url, message, conversation) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_id: message.clientId, content: message.content, stream: true }),
    });
    if (!(response.headers.get("Content-Type") || "").startsWith("application/x-ndjson")) {
      return { status: response.status, answer: await response.json().catch(() => null) };
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let writing = null;
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      const lines = buffer.split("\n");
      buffer = lines.pop();
      for (const line of lines.filter(Boolean)) {
        const part = JSON.parse(line);
        if ("delta" in part) {
          conversation.grow(writing, part.delta);
        } else if (part.user && !part.assistant) {
          writing = conversation.showWriting(part.user.content);
        } else {
          return { status: part.error ? part.status : 200, answer: part };
        }
      }
      if (done) return null;
    }
  }

  // Sends `message` to `url` until the server gives an answer that is not a restart's or an
  // unreachable server's: {status, answer, message}, `message` being the one answered. While
  // an earlier message of the session waits for its reply (409 pending_client_id) that one is
  // asked for first, and `waiting.askingFor(it)` told; `waiting.reconnecting(text)` says the
  // message is kept while the server is away.
  async function reply(url, message, conversation, waiting) {
    for (let attempt = 0; ; attempt += 1) {
      let asked = null;
      try {
        asked = await ask(url, message, conversation);
      } catch (error) {
        asked = null;
      }
      conversation.clearWriting();
      if (asked === null || asked.status >= 500 && asked.status !== 502 && asked.status !== 504 || !asked.answer) {
        // The server is restarting or unreachable: the message is kept; ask again.
        waiting.reconnecting("Reconnecting… your message is kept and will be sent.");
        await new Promise((resolve) => setTimeout(resolve, retryWait(attempt)));
        continue;
      }
      if (asked.status === 409 && asked.answer.pending_client_id) {
        message = { clientId: asked.answer.pending_client_id, content: message.content };
        waiting.askingFor(message);
        continue;
      }
      return { status: asked.status, answer: asked.answer, message };
    }
  }

  window.ChatSend = { newClientId, reply, retryWait };
})();
