/* global document, window, navigator, location, Element */
// Readership beacons (docs/statistics.md): how far this reader got, how long the page was in view,
// links followed and share links copied. Nothing is stored in the browser; small reports go to
// <document>/beacon with navigator.sendBeacon, batched: when a page is turned (at most every 2 s),
// once 10 s of reading have passed, every minute while the page is in view, and when it is hidden.
// The view itself was counted by the server when the page was served.
(() => {
  "use strict";
  const reader = document.getElementById("reader");
  if (!reader || typeof navigator.sendBeacon !== "function") return;
  const pageInput = reader.querySelector("#page-number");
  const url = location.pathname.replace(/\/embed$/, "") + "/beacon";
  const startPage = Number(reader.dataset.startPage || 1);
  const lastPage = Number(reader.dataset.pages || 1);

  let maxPage = startPage;
  let turned = false;
  let visibleMs = 0; // in view since the last report
  let totalMs = 0;
  let shares = 0;
  let clicks = 0;
  let lastTick = performance.now();
  let lastSent = 0;
  let pendingTurn = false;
  let sentReadMark = false;

  function currentPage() {
    const n = pageInput ? Number(pageInput.value) : startPage;
    return Number.isFinite(n) && n >= 1 ? Math.min(Math.round(n), lastPage) : startPage;
  }

  function tick() {
    const now = performance.now();
    if (document.visibilityState === "visible") {
      visibleMs += now - lastTick;
      totalMs += now - lastTick;
    }
    lastTick = now;
  }

  // Called by the interval and on leaving: a page reached in the last second before the tab is
  // hidden or closed is part of what the last report says.
  function notePage() {
    const page = currentPage();
    if (page !== startPage) turned = true;
    if (page > maxPage || (turned && !sentReadMark)) {
      maxPage = Math.max(maxPage, page);
      pendingTurn = true;
    }
  }

  function send() {
    tick();
    notePage();
    if (turned) sentReadMark = true;
    const seconds = Math.floor(visibleMs / 1000);
    const body = JSON.stringify({ p: maxPage, s: seconds, t: turned, sh: shares, c: clicks });
    if (navigator.sendBeacon(url, body)) {
      visibleMs -= seconds * 1000;
      shares = 0;
      clicks = 0;
      lastSent = performance.now();
      pendingTurn = false;
    }
  }

  setInterval(() => {
    tick();
    notePage();
    const now = performance.now();
    if (pendingTurn && now - lastSent >= 2000) send();
    else if (!sentReadMark && totalMs >= 10_500) {
      sentReadMark = true;
      send();
    } else if (document.visibilityState === "visible" && now - lastSent >= 60_000) send();
  }, 1000);

  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") send();
    else lastTick = performance.now();
  });
  window.addEventListener("pagehide", send);

  // A link inside the document followed to another site.
  reader.addEventListener("click", (e) => {
    const a = e.target instanceof Element ? e.target.closest("a[href]") : null;
    if (!a || a.origin === location.origin) return;
    clicks++;
    send();
  });
  // The document's address or an embed code copied from the page.
  document.addEventListener("copy", () => {
    const text = String(document.getSelection() || "");
    if (text.includes(location.host + location.pathname.replace(/\/embed$/, "")) || /<iframe/i.test(text)) {
      shares++;
      send();
    }
  });
})();
