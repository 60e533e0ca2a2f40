// The helpme paradigm's page: CoAuthor's records of what the writer does, sent to the core's
// event API; "Help me" asks this paradigm's API and offers one continuation.
(function () {
  "use strict";
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const text = document.getElementById("text");
  const status = document.getElementById("status");
  const offer = document.getElementById("offer");
  let seq = 0;
  let before = "";
  let offered = null;
  const unsent = [];

  function record(name, source, details = {}) {
    unsent.push({
      eventName: name, eventSource: source, eventTimestamp: Date.now(),
      textDelta: details.textDelta || "", cursorRange: "", currentDoc: details.currentDoc || "",
      currentCursor: text.selectionEnd, currentSuggestions: details.currentSuggestions || [],
      currentSuggestionIndex: 0, currentHoverIndex: "", ...boot.controls, seq: seq++,
    });
  }

  // One edit as a Quill delta: what changed between the common start and the common end.
  function delta(old, now) {
    let start = 0;
    while (start < old.length && start < now.length && old[start] === now[start]) start += 1;
    let end = 0;
    while (end < old.length - start && end < now.length - start
           && old[old.length - 1 - end] === now[now.length - 1 - end]) end += 1;
    const ops = start ? [{ retain: start }] : [];
    const inserted = now.slice(start, now.length - end);
    const deleted = old.length - start - end;
    if (inserted) ops.push({ insert: inserted });
    if (deleted) ops.push({ delete: deleted });
    return { ops, name: inserted ? "text-insert" : "text-delete" };
  }

  async function send() {
    const batch = unsent.splice(0, unsent.length);
    if (!batch.length) return;
    const response = await fetch(boot.eventsUrl, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ events: batch }),
    });
    if (!response.ok) { unsent.unshift(...batch); status.textContent = "Saving failed; retrying."; }
  }

  text.value = boot.prompt.slice(0, -1);
  before = text.value;
  record("system-initialize", "api", { currentDoc: boot.prompt });
  text.addEventListener("input", () => {
    const change = delta(before, text.value);
    before = text.value;
    record(change.name, "user", { textDelta: { ops: change.ops } });
  });

  document.getElementById("help").addEventListener("click", async () => {
    record("suggestion-get", "user");
    const response = await fetch(boot.helpUrl, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ doc: text.value }),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok || !answer.help) { record("suggestion-fail", "api"); status.textContent = "No help right now."; return; }
    offered = answer.help;
    record("suggestion-open", "api", { currentSuggestions: [{ index: 0, original: offered, trimmed: offered.trim(), probability: null }] });
    document.getElementById("offered").textContent = offered.trim();
    offer.hidden = false;
  });

  document.getElementById("use").addEventListener("click", () => {
    record("suggestion-select", "user");
    record("suggestion-close", "api");
    const change = delta(text.value, text.value + offered);
    text.value += offered;
    before = text.value;
    record("text-insert", "api", { textDelta: { ops: change.ops } });
    offer.hidden = true;
  });

  document.getElementById("decline").addEventListener("click", () => {
    record("suggestion-close", "user");
    offer.hidden = true;
  });

  document.getElementById("finish").addEventListener("click", async () => {
    await send();
    const response = await fetch(boot.finishUrl, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ last_seq: seq - 1, text: text.value + "\n", pending: unsent.length }),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.ok && answer.next) window.location = answer.next;
    else status.textContent = answer.error || "Please try again.";
  });
  setInterval(send, 2000);
})();
