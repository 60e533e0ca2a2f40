// A page shown as the answer to its own form's POST (the form was refused and is asked again:
// a box left unticked, a survey question unanswered). Its history entry is a POST, and pages
// are sent with Cache-Control: no-store, so the back button from the next page, or a reload,
// would have Chromium show "Confirm Form Resubmission" (net::ERR_CACHE_MISS) instead of asking
// the server again. The entry becomes a plain GET of the same address, which leads to the step
// the session is at (templates/base.html loads this only after a POST).
//
// The focus goes to the first field the server refused (aria-invalid, its error the field's
// description: templates/_survey_items.html, consent.html...), not to the top of the page,
// where a keyboard or screen-reader user would have to search for what to fix.
"use strict";

window.history.replaceState(window.history.state, "", window.location.href);

(function () {
  const refused = Array.from(document.querySelectorAll('form [aria-invalid="true"]'))
    .find((field) => !field.closest("[hidden]"));
  if (refused) refused.focus();
})();
