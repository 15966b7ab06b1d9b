/* global document, FormData, URLSearchParams */
// Ratings and comments under the reader (src/web/reader-comments.ts), sent without leaving the
// page. Without this script the same forms POST and answer a page of their own.
"use strict";

(() => {
  const send = async (form) => {
    const res = await fetch(form.action, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(new FormData(form)).toString(),
      credentials: "omit",
    });
    const answer = await res.json().catch(() => ({}));
    return { ok: res.ok, answer };
  };
  const failure = "This could not be sent. Please try again.";

  const rating = document.querySelector("[data-role=rating]");
  if (rating) {
    const status = rating.querySelector("[data-role=rating-status]");
    const now = rating.querySelector("[data-role=rating-now]");
    rating.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!rating.querySelector("input[name=stars]:checked")) {
        status.textContent = "Choose from 1 to 5 stars first.";
        return;
      }
      status.textContent = "Sending…";
      send(rating)
        .then(({ ok, answer }) => {
          status.textContent = answer.message || (ok ? "" : failure);
          if (ok && answer.summary && now) now.textContent = answer.summary;
        })
        .catch(() => {
          status.textContent = failure;
        });
    });
  }

  const comment = document.querySelector("[data-role=comment-form]");
  if (comment) {
    const status = comment.querySelector("[data-role=comment-status]");
    comment.addEventListener("submit", (event) => {
      event.preventDefault();
      const button = comment.querySelector("button[type=submit]");
      button.disabled = true;
      status.textContent = "Sending…";
      send(comment)
        .then(({ ok, answer }) => {
          status.textContent = answer.message || (ok ? "" : failure);
          if (ok) comment.querySelector("textarea[name=text]").value = "";
          else if (answer.field) comment.querySelector(`[name=${answer.field}]`)?.focus();
        })
        .catch(() => {
          status.textContent = failure;
        })
        .finally(() => {
          button.disabled = false;
        });
    });
  }
})();
