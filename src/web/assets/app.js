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

  /*
   * Live states: documents still processing are asked about until they are published or failed (a
   * published one gets its View link, a failed one its Retry); on the list's first page, documents
   * made elsewhere (another tab, the API) are added at its top.
   */
  function setupStates(list) {
    var url = list.getAttribute("data-states-url");
    var since = list.getAttribute("data-since");
    var delay = 1500;
    function pending() {
      return Array.prototype.slice.call(list.querySelectorAll('[data-state="P"]'));
    }
    function button(href, text, title, className) {
      var a = document.createElement("a");
      a.className = className;
      a.href = href;
      a.textContent = text;
      var sr = document.createElement("span");
      sr.className = "sr-only";
      sr.textContent = " " + title;
      a.appendChild(sr);
      return a;
    }
    function retry(id, title) {
      var form = document.createElement("form");
      form.className = "retry";
      form.method = "post";
      form.action = "/app/documents/" + id + "/retry";
      var token = document.createElement("input");
      token.type = "hidden";
      token.name = "_csrf";
      token.value = csrf;
      form.appendChild(token);
      var b = document.createElement("button");
      b.type = "submit";
      b.textContent = "Retry";
      var sr = document.createElement("span");
      sr.className = "sr-only";
      sr.textContent = " " + title;
      b.appendChild(sr);
      form.appendChild(b);
      return form;
    }
    function show(el, state) {
      var cell = el.querySelector(".state");
      el.setAttribute("data-state", state.state);
      if (!cell) return;
      cell.className = "state state-" + state.state;
      cell.textContent = state.state === "F" ? "Failed:" : state.label;
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
      var actions = el.querySelector(".doc-actions");
      if (actions && state.view && !actions.querySelector(".view")) {
        actions.appendChild(document.createTextNode(" "));
        actions.appendChild(button(state.view, "View", state.title, "button view"));
        var when = el.querySelector("[data-when]");
        if (when) when.textContent = "Published";
      }
      if (actions && state.state === "F" && !actions.querySelector(".retry")) actions.appendChild(retry(state.documentId, state.title));
      var live = document.getElementById("live");
      if (live) live.textContent = state.title + ": " + state.label + (state.reason ? ". " + state.reason : "");
    }
    function addNew(added) {
      added.slice().reverse().forEach(function (a) {
        if (list.querySelector('[data-id="' + a.documentId + '"]')) return;
        var t = document.createElement("template");
        t.innerHTML = a.row;
        var li = t.content.firstElementChild;
        if (!li) return;
        li.classList.add("doc-new");
        list.insertBefore(li, list.firstChild);
        var empty = document.querySelector('[data-role="empty"]');
        if (empty) empty.remove();
        var live = document.getElementById("live");
        var h = li.querySelector("h2");
        if (live && h) live.textContent = "New document: " + h.textContent;
      });
    }
    function poll() {
      var els = pending();
      if (els.length === 0 && !since) return;
      var ids = els.map(function (el) { return el.getAttribute("data-id"); });
      // A document made just before the last answer may commit after it: ask a little back, the ids already shown are skipped.
      var q = "?ids=" + encodeURIComponent(ids.join(",")) + (since ? "&since=" + String(Math.max(0, Number(since) - 120000)) : "");
      fetch(url + q, { headers: { accept: "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : { states: [] }; })
        .then(function (body) {
          body.states.forEach(function (s) {
            var el = list.querySelector('[data-id="' + s.documentId + '"]');
            if (el && s.state !== "P") show(el, s);
          });
          if (since && body.added) {
            addNew(body.added);
            since = String(body.now);
          }
          // While something converts, often; otherwise just often enough to see new documents come.
          delay = pending().length > 0 ? Math.min(delay * 1.3, 10000) : 5000;
          setTimeout(poll, delay);
        }, function () { setTimeout(poll, 10000); });
    }
    setTimeout(poll, delay);
  }

  /* The list's bulk form: how many are selected, and a confirmation before deleting them. */
  function setupBulk(form) {
    var count = form.querySelector('[data-role="bulk-count"]');
    function picked() { return document.querySelectorAll('input.pick[form="bulk"]:checked').length; }
    function update() {
      var n = picked();
      if (count) count.textContent = n === 0 ? "None selected." : n === 1 ? "1 selected." : n + " selected.";
    }
    document.addEventListener("change", function (e) {
      if (e.target && e.target.classList && e.target.classList.contains("pick")) update();
    });
    form.addEventListener("submit", function (e) {
      if (form.elements.action.value === "delete" && !window.confirm("Delete " + picked() + " documents for good?")) e.preventDefault();
    });
    update();
  }

  /* On a phone the navigation is one line that scrolls sideways: the current page's entry is brought into it. */
  function showCurrentNav() {
    var nav = document.querySelector(".app-nav");
    var current = nav && nav.querySelector('[aria-current="page"]');
    if (!nav || !current || nav.scrollWidth <= nav.clientWidth) return;
    nav.scrollLeft = Math.max(0, current.offsetLeft - (nav.clientWidth - current.offsetWidth) / 2);
  }

  function init() {
    showCurrentNav();
    Array.prototype.forEach.call(document.querySelectorAll("[data-copy]"), setupCopy);
    Array.prototype.forEach.call(document.querySelectorAll("form[data-confirm]"), setupConfirm);
    Array.prototype.forEach.call(document.querySelectorAll("ol[data-states-url]"), setupStates);
    Array.prototype.forEach.call(document.querySelectorAll("form#bulk"), setupBulk);
  }
  window.quireApp = { csrf: csrf };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
