// Rating from the keyboard on a submission page of the reviewers' workspace.
//
// A digit of the rubric rates at once (a JSON POST of the page's form, comment included), and
// the answer reveals the other reviewers' ratings, which the server sends only once this
// reviewer has rated. n saves a changed comment and opens the next submission; it asks for a
// rating first unless the submission can no longer take one (a researcher decided it, or the
// server refused the rating as closed, 409), so the reviewer is never held on it. A comment
// changed after rating is saved as the reviewer leaves its box (a link elsewhere included), and
// leaving the page while still typing it asks first. Without this script the same form works
// with its buttons. Every POST carries the page's CSRF token.
//
// Every save also carries the version of the rating the page last saw (the form's hidden
// version). When the reviewer changed the rating meanwhile in another tab, the server refuses
// the save (409, stale) and says what is stored now: the page shows that message and the stored
// score, keeps the reviewer's comment in its box, and takes the stored version, so rating again
// here is a choice made knowingly to replace the other tab's.
//
// A save refused because the login expired (403 with a login address) keeps the comment in
// this tab's sessionStorage and shows a link to log in again, which returns to this page; the
// page puts the comment back in its box, to be saved with the next rating.
"use strict";

(function () {
  const boot = JSON.parse(document.getElementById("review-boot").textContent);
  const form = document.getElementById("rating-form");
  const nextForm = document.getElementById("next-form");
  const comment = document.getElementById("comment");
  const status = document.getElementById("rating-status");
  const others = document.getElementById("others");
  const othersList = document.getElementById("others-list");
  const csrfToken = form.querySelector("input[name=csrf_token]").value;
  const version = document.getElementById("rating-version");
  const DRAFT = `review-comment-draft:${location.pathname}`;  // a comment a lost login left unsaved
  const TYPING = "textarea, select, input:not([type=range])";

  let rated = boot.rated;  // the stored score, null before the first rating
  let closed = boot.closed;  // no rating can be saved here any more
  let savedComment = comment.value;
  let sentComment = savedComment;  // the comment of the latest rating sent

  function say(message, tone = "info") {
    status.textContent = message;
    status.dataset.tone = tone;
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST",
      body,
      headers: { Accept: "application/json", "X-CSRF-Token": csrfToken },
      credentials: "same-origin",
      keepalive: true,  // a comment saved as the reviewer follows a link still arrives
    });
    const answer = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
    if (!response.ok) {
      const error = new Error(answer.error || `the server answered ${response.status}`);
      error.status = response.status;
      error.answer = answer;
      throw error;
    }
    return answer;
  }

  // The chosen score is drawn with a border, and told to a screen reader as a pressed button.
  function showChosen(score) {
    for (const button of form.querySelectorAll("button[name=score]")) {
      const chosen = Number(button.value) === score;
      button.classList.toggle("chosen", chosen);
      button.setAttribute("aria-pressed", chosen ? "true" : "false");
    }
  }

  function showOthers(list) {
    const items = list.map((other) => {
      const item = document.createElement("li");
      const name = document.createElement("strong");
      name.textContent = other.reviewer;
      item.append(name, `: ${other.score}${other.comment ? `: ${other.comment}` : ""}`);
      return item;
    });
    if (!items.length) {
      const none = document.createElement("li");
      none.className = "muted";
      none.textContent = "No other ratings yet.";
      items.push(none);
    }
    othersList.replaceChildren(...items);
    others.hidden = false;
  }

  let pending = Promise.resolve(true);  // the rating being saved, which n waits for

  function rate(score) {
    pending = pending.then(() => save(score));
    return pending;
  }

  async function save(score) {
    say("Saving…");
    const body = new FormData(form);
    body.set("score", String(score));
    sentComment = comment.value.trim();
    try {
      const answer = await post(boot.rateUrl, body);
      rated = answer.score;
      savedComment = answer.comment;
      version.value = String(answer.version);
      showChosen(rated);
      showOthers(answer.others);
      document.getElementById("progress-rated").textContent = String(answer.progress.rated);
      document.getElementById("progress-total").textContent = String(answer.progress.total);
      say(`Your rating: ${rated} (saved)`);
      return true;
    } catch (error) {
      if (error.status === 409 && error.answer.stale) {
        takeStored(error.answer.current);
        say(error.message, "error");  // the server's words: what changed, and how to get it
        return false;
      }
      if (error.status === 403 && error.answer.login) {
        loggedOut(error.message, error.answer.login);
        return false;
      }
      if (error.status === 409) closed = true;
      say(`Not saved: ${error.message}`, "error");
      return false;
    }
  }

  // The rating as another tab stored it; the comment box keeps what this page's reviewer wrote.
  function takeStored(current) {
    rated = current ? current.score : null;
    savedComment = sentComment = current ? current.comment : "";
    version.value = String(current ? current.version : 0);
    showChosen(rated);
  }

  // The login ended while the reviewer was rating: the comment waits in this tab's storage
  // for the page the login link returns to, and the status says how to get there.
  function loggedOut(message, loginUrl) {
    if (comment.value.trim()) sessionStorage.setItem(DRAFT, comment.value);
    say(`${message} `, "error");
    const link = document.createElement("a");
    link.href = loginUrl;
    link.textContent = "Log in again";
    link.dataset.testid = "log-in-again";
    status.append(link);
  }

  const draft = sessionStorage.getItem(DRAFT);
  if (draft !== null) {
    sessionStorage.removeItem(DRAFT);
    if (!closed && draft.trim() !== comment.value.trim()) {
      comment.value = draft;
      say("The comment you wrote before your login expired is back in its box: rate to save it.");
    }
  }

  async function next() {
    await pending;
    if (rated === null && !closed) {
      say(`Rate this submission first (${boot.scores.join(", ")}).`, "error");
      return;
    }
    if (comment.value.trim() !== savedComment && !(await rate(rated))) return;
    nextForm.submit();
  }

  // What the reviewer wrote under a rating that is not yet on its way to the server.
  function unsentComment() {
    return rated !== null && !closed && comment.value.trim() !== sentComment;
  }

  comment.addEventListener("change", () => {
    if (unsentComment()) rate(rated);
  });

  window.addEventListener("beforeunload", (event) => {
    if (unsentComment()) event.preventDefault();  // the browser asks whether to leave
  });

  form.addEventListener("submit", (event) => {
    const score = Number(event.submitter && event.submitter.value);
    if (!boot.scores.includes(score)) return;  // let the browser post it
    event.preventDefault();
    rate(score);
  });

  nextForm.addEventListener("submit", (event) => {
    if (event.submitter) {  // the button, not next() calling submit()
      event.preventDefault();
      next();
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest && event.target.closest(TYPING)) {
      if (event.key === "Escape") event.target.blur();  // back to the shortcuts
      return;
    }
    const score = Number(event.key);
    if (/^[0-9]$/.test(event.key) && boot.scores.includes(score)) {
      event.preventDefault();
      rate(score);
    } else if (event.key === "n") {
      event.preventDefault();
      next();
    }
  });
})();
