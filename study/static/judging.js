// A judge's task page (templates/judging/task.html): each choice is stored as it is made, so a
// reload loses nothing; Submit finishes the task once every text is rated
// (POST /api/judging/<task_id>/ratings, schemas/api/judging-ratings.schema.json). Submit sends
// every choice on the page with it, stored in the same request: a choice still on its way (the
// last one, with Submit pressed at once) or one that failed to save is not missing there.
(function () {
  "use strict";
  var form = document.getElementById("judging");
  if (!form) return;
  var url = form.getAttribute("data-rate-url");
  var status = form.querySelector("[data-testid=judging-status]");
  var button = form.querySelector("[data-testid=judging-submit]");

  function send(body) {
    return fetch(url, {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body),
      credentials: "same-origin",
    }).then(function (response) {
      return response.json().then(function (answer) {
        if (!response.ok) throw new Error(answer.error || ("the server answered " + response.status));
        return answer;
      });
    });
  }

  function show(answer) {
    status.textContent = answer.rated + " of " + answer.total + " texts rated";
  }

  form.addEventListener("change", function (event) {
    var input = event.target;
    if (input.type !== "radio") return;
    var item = input.closest("fieldset").getAttribute("data-item");
    send({ratings: [{item: item, score: parseInt(input.value, 10)}]}).then(show, function (error) {
      status.textContent = "Your choice was not saved: " + error.message + ". Please choose again.";
    });
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var unrated = Array.prototype.filter.call(form.querySelectorAll("fieldset[data-item]"), function (set) {
      return !set.querySelector("input:checked");
    });
    if (unrated.length) {
      // The focus goes to the first text left unrated, so a keyboard or screen reader user is
      // where the answer is owed (left on Submit, they would have to hunt for it); its first
      // answer takes the focus without being chosen. The status line says which text it is.
      var first = unrated[0];
      var legend = first.querySelector("legend");
      status.textContent = "Please rate every text first (" + unrated.length + " left): "
        + (legend ? legend.textContent.trim() : "this text") + " has no answer yet.";
      first.scrollIntoView({block: "center"});
      first.querySelector("input[type=radio]").focus({preventScroll: true});
      return;
    }
    var chosen = Array.prototype.map.call(form.querySelectorAll("fieldset[data-item] input:checked"), function (input) {
      return {item: input.closest("fieldset").getAttribute("data-item"), score: parseInt(input.value, 10)};
    });
    button.disabled = true;
    send({ratings: chosen, submit: true}).then(function (answer) {
      window.location.assign(answer.next);
    }, function (error) {
      button.disabled = false;
      status.textContent = "Not submitted: " + error.message;
    });
  });
})();
