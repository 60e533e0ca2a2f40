// The animated replay of a writing session in the reviewers' workspace: the prompt, then every
// text change at its moment, each character coloured by who wrote it (prompt / writer / AI).
//
// The payload is study.review.playback's: {prompt, duration, steps: [[t, eventIndex, author,
// ops], ...]}, with t in milliseconds since the session began and author the curation replay's
// code: P prompt, W writer, S an accepted suggestion (the AI), O text pasted from outside the
// study (study.review.pastes). ops are the session's own Quill
// delta ops, whose positions count UTF-16 code units, which is how JavaScript strings index, so
// they apply to strings as they are. They come from the log as the release redactor rewrites
// it (study.review.presentation): the writer's own identifiers are masked in the keystrokes that
// typed them, so no moment of the replay spells them.
//
// The page first shows the final text as the server rendered it; the replay takes over the
// text only once the reviewer plays or scrubs. From then on an L0 session's assistant panel
// shows only the messages the writer had seen at that moment, and a paste's time in the list
// of pastes from outside moves the replay there.
"use strict";

(function () {
  const dataNode = document.getElementById("replay-data");
  if (!dataNode) return;
  const data = JSON.parse(dataNode.textContent);
  const controls = document.getElementById("replay-controls");
  const playButton = document.getElementById("replay-play");
  const speedSelect = document.getElementById("replay-speed");
  const scrub = document.getElementById("replay-scrub");
  const clock = document.getElementById("replay-clock");
  const textNode = document.getElementById("replay-text");
  const CLASSES = { P: "by-prompt", W: "by-writer", S: "by-suggestion", O: "by-outside" };
  const messages = document.querySelectorAll("[data-testid=panel-message]");
  // While playing, a pause in the session longer than this (session time) is cut short, so a
  // writer's coffee break does not stall the replay.
  const LONGEST_PAUSE_MS = 3000;
  // Keys typed into these are text, not shortcuts (a focused slider still takes shortcuts).
  const TYPING = "textarea, select, input:not([type=range])";

  let text = "";
  let authors = "";
  let applied = -1;  // steps applied to text; -1: the replay has not taken over yet
  let position = data.duration;  // milliseconds into the session
  let playing = false;
  let lastFrame = null;

  // -- deltas -----------------------------------------------------------------------------------

  function applyStep(step) {
    const code = step[2] || "W";
    let index = 0;
    let newText = "";
    let newAuthors = "";
    for (const op of step[3]) {
      if (typeof op.insert === "string") {
        newText += op.insert;
        newAuthors += code.repeat(op.insert.length);
      } else if (typeof op.retain === "number") {
        newText += text.slice(index, index + op.retain);
        newAuthors += authors.slice(index, index + op.retain);
        index += op.retain;
      } else if (typeof op.delete === "number") {
        index += op.delete;
      }
    }
    text = newText + text.slice(index);
    authors = newAuthors + authors.slice(index);
  }

  function restart() {
    text = data.prompt;
    authors = "P".repeat(text.length);
    applied = 0;
  }

  // -- position -------------------------------------------------------------------------------

  function seek(milliseconds) {
    position = Math.max(0, Math.min(data.duration, milliseconds));
    const before = applied;
    if (applied < 0 || (applied > 0 && data.steps[applied - 1][0] > position)) restart();
    while (applied < data.steps.length && data.steps[applied][0] <= position) {
      applyStep(data.steps[applied]);
      applied += 1;
    }
    if (applied !== before) renderText();
    for (const message of messages) message.hidden = Number(message.dataset.t) > position;
    renderControls();
  }

  function renderText() {
    const fragment = document.createDocumentFragment();
    let start = 0;
    for (let i = 1; i <= authors.length; i += 1) {
      if (i === authors.length || authors[i] !== authors[start]) {
        const span = document.createElement("span");
        span.className = CLASSES[authors[start]] || CLASSES.W;
        span.textContent = text.slice(start, i);
        fragment.appendChild(span);
        start = i;
      }
    }
    textNode.replaceChildren(fragment);
    textNode.dataset.step = String(applied);
    textNode.dataset.eventIndex = String(applied > 0 ? data.steps[applied - 1][1] : 0);
  }

  function clockText(milliseconds) {
    const seconds = Math.floor(milliseconds / 1000);
    return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  }

  function renderControls() {
    scrub.value = String(Math.round(position));
    clock.textContent = `${clockText(position)} / ${clockText(data.duration)}`;
    // The label says what pressing it does; no aria-pressed besides, which would have a screen
    // reader say "Pause, pressed" while playing and "Play, not pressed" once paused.
    playButton.textContent = playing ? "Pause" : "Play";
  }

  // -- playing --------------------------------------------------------------------------------

  function frame(now) {
    if (!playing) return;
    const speed = Number(speedSelect.value) || 1;
    let next = position + (lastFrame === null ? 0 : (now - lastFrame) * speed);
    lastFrame = now;
    const upcoming = data.steps[Math.max(applied, 0)];
    if (upcoming && upcoming[0] - next > LONGEST_PAUSE_MS) next = upcoming[0] - LONGEST_PAUSE_MS;
    seek(next);
    if (position >= data.duration) {
      pause();
      return;
    }
    window.requestAnimationFrame(frame);
  }

  function play() {
    if (position >= data.duration) seek(0);
    playing = true;
    lastFrame = null;
    renderControls();
    window.requestAnimationFrame(frame);
  }

  function pause() {
    playing = false;
    renderControls();
  }

  function toggle() {
    if (playing) pause();
    else play();
  }

  playButton.addEventListener("click", toggle);
  for (const button of document.querySelectorAll("button[data-seek]")) {
    button.addEventListener("click", () => {
      pause();
      seek(Number(button.dataset.seek));
      textNode.scrollIntoView({ block: "nearest" });
    });
  }
  scrub.addEventListener("input", () => {
    const wanted = Number(scrub.value);  // read before pause() redraws the slider
    pause();
    seek(wanted);
  });
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target.closest && target.closest(TYPING)) return;
    if (event.key === "p") {
      event.preventDefault();
      toggle();
    }
  });

  controls.hidden = false;
  renderControls();
  window.StudyReplay = { seek, play, pause, get position() { return position; } };
})();
