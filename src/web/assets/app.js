/* global document, window, navigator */
/* Quire's publisher app: small enhancements on plain forms. Everything works without it. */
(function () {
  "use strict";
  var root = document.documentElement;
  root.classList.remove("no-js");
  root.classList.add("js");
  var csrfMeta = document.querySelector('meta[name="csrf-token"]');
  var csrf = csrfMeta ? csrfMeta.getAttribute("content") : "";

  /* Copy buttons: data-copy names the element whose text is copied. */
  function setupCopy(button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        var label = button.textContent;
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  }

  /* Forms with data-confirm ask before they are sent (the server asks again without script). */
  function setupConfirm(form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.getAttribute("data-confirm"))) e.preventDefault();
    });
  }

  /* Live states: documents still processing are asked about until they are active or failed. */
  function setupStates(list) {
    var url = list.getAttribute("data-states-url");
    var delay = 1500;
    function pending() {
      return Array.prototype.slice.call(list.querySelectorAll('[data-state="P"]'));
    }
    function show(el, state) {
      var cell = el.querySelector(".state");
      el.setAttribute("data-state", state.state);
      cell.className = "state state-" + state.state;
      cell.textContent = state.label;
      if (state.reason) {
        var reason = document.createElement("span");
        reason.className = "state-reason";
        reason.textContent = state.reason;
        cell.appendChild(reason);
      }
      var pages = el.querySelector("[data-pages]");
      if (pages) pages.textContent = String(state.pageCount);
      var cover = el.querySelector(".no-cover");
      if (cover && state.cover) {
        var img = document.createElement("img");
        img.className = "cover";
        img.alt = "";
        img.src = state.cover;
        cover.replaceWith(img);
      }
      var live = document.getElementById("live");
      if (live) live.textContent = state.title + ": " + state.label + (state.reason ? ". " + state.reason : "");
    }
    function poll() {
      var els = pending();
      if (els.length === 0) return;
      var ids = els.map(function (el) { return el.getAttribute("data-id"); });
      fetch(url + "?ids=" + encodeURIComponent(ids.join(",")), { headers: { accept: "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : { states: [] }; })
        .then(function (body) {
          body.states.forEach(function (s) {
            var el = list.querySelector('[data-id="' + s.documentId + '"]');
            if (el && s.state !== "P") show(el, s);
          });
          delay = Math.min(delay * 1.3, 10000);
          setTimeout(poll, delay);
        }, function () { setTimeout(poll, 10000); });
    }
    setTimeout(poll, delay);
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-copy]"), setupCopy);
    Array.prototype.forEach.call(document.querySelectorAll("form[data-confirm]"), setupConfirm);
    Array.prototype.forEach.call(document.querySelectorAll("[data-states-url]"), setupStates);
  }
  window.quireApp = { csrf: csrf };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
