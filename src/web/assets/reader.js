/* global document, window, history, location, IntersectionObserver, Image, URLSearchParams */
// The reader's one script: plain browser JavaScript, no framework, no build step. Everything it
// needs comes from the server's HTML (data- attributes), each page's text (text/<n>.json) and the
// server's search (search.json); without it
// the page stays a readable list of page images with their text.
"use strict";

(() => {
  const root = document.documentElement;
  root.classList.remove("no-js");
  root.classList.add("js");

  // "Being processed": ask for the state now and then, reload once it has changed. A document
  // converted as page ranges also says how many pages are ready: the figure follows it.
  const showProgress = (ready, total) => {
    const bar = document.querySelector("[data-role=progress] progress");
    const figure = document.querySelector("[data-role=pages-ready]");
    if (!bar || !figure) return;
    bar.max = total;
    bar.value = ready;
    figure.textContent = `${ready} of ${total} pages ready`;
  };
  const poll = document.querySelector("[data-poll]");
  if (poll) {
    const timer = setInterval(() => {
      fetch(poll.dataset.poll, { cache: "no-store" })
        .then((r) => (r.ok ? r.json() : null))
        .then((s) => {
          if (s && s.state !== "P") {
            clearInterval(timer);
            location.reload();
          } else if (s && Number.isInteger(s.pagesReady) && Number.isInteger(s.pageCount)) {
            showProgress(s.pagesReady, s.pageCount);
          }
        })
        .catch(() => {});
    }, 3000);
    return;
  }

  const reader = document.getElementById("reader");
  const stage = reader && reader.querySelector("[data-role=stage]");
  if (!reader || !stage) return; // state pages, profile, explicit notice

  // A long description folds to a few lines, with a button to read it all.
  const description = reader.querySelector(".doc-description");
  if (description) {
    description.id = "doc-description";
    description.classList.add("folded");
    if (description.scrollHeight > description.clientHeight + 2) {
      const more = document.createElement("button");
      more.type = "button";
      more.className = "more";
      more.textContent = "Show all";
      more.setAttribute("aria-expanded", "false");
      more.setAttribute("aria-controls", "doc-description");
      more.addEventListener("click", () => {
        const open = description.classList.toggle("folded") === false;
        more.textContent = open ? "Show less" : "Show all";
        more.setAttribute("aria-expanded", String(open));
      });
      description.after(more);
    } else description.classList.remove("folded");
  }

  const total = Number(reader.dataset.pages);
  const figures = Array.from(reader.querySelectorAll(".page"));
  const thumbLinks = Array.from(reader.querySelectorAll(".thumbs a"));
  const toolbar = reader.querySelector(".toolbar");
  const pageInput = reader.querySelector("#page-number");
  const searchForm = document.querySelector("[data-role=search]");
  const results = document.querySelector("[data-role=results]");
  const modeButton = reader.querySelector("[data-action=mode]");

  let current = 1;
  let mode = "paged";
  let zoom = 1;
  let spread = false;
  /** Page number -> its `{text, words}` once loaded; a page's text is fetched when it is first shown. */
  const textPages = new Map();
  const textLoading = new Map();
  let terms = [];
  const AHEAD = 2;

  toolbar.hidden = false;
  reader.dataset.mode = mode;
  // The ids let #page=N links work without script. Here the script turns pages itself: without the
  // ids the browser's own jump to the fragment (which it retries until the page has loaded) cannot
  // scroll the window under the toolbar.
  for (const f of figures) f.removeAttribute("id");
  const thumbsNav = reader.querySelector(".thumbs");

  const clamp = (n) => Math.min(total, Math.max(1, n));
  const fold = (s) => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  const figureOf = (n) => figures[n - 1];
  const readSrc = (n) => figureOf(n).querySelector("img").getAttribute("src");
  const thumbSrc = (n) => {
    const img = thumbLinks[n - 1] && thumbLinks[n - 1].querySelector("img");
    return img ? img.getAttribute("src") : null;
  };
  const ratioOf = (n) => {
    const img = figureOf(n).querySelector("img");
    return img.naturalWidth ? img.naturalHeight / img.naturalWidth : Number(img.getAttribute("height")) / Number(img.getAttribute("width"));
  };

  /** The pages shown together: the cover alone, then pairs (2-3, 4-5, ...) on wide screens. */
  function groupOf(n) {
    if (mode !== "paged" || !spread || n === 1) return [n];
    const first = n % 2 === 0 ? n : n - 1;
    return first + 1 <= total ? [first, first + 1] : [first];
  }

  function decideSpread() {
    spread = mode === "paged" && stage.clientWidth >= 900 && stage.clientWidth > stage.clientHeight * 1.15;
    reader.classList.toggle("spread", spread);
  }

  /** The page box's width, and the same width as its image's `sizes`: zoomed in, the browser takes a larger one from srcset. */
  function sizeFigure(f, w) {
    f.style.width = `${Math.floor(w)}px`;
    const img = f.querySelector("img");
    const sizes = `${Math.ceil(w)}px`;
    // Never smaller than what is shown already: zooming out must not fetch a smaller copy.
    const shown = Number((img.dataset.sizes || "0").replace("px", ""));
    if (img.hasAttribute("srcset") && Math.ceil(w) > shown) {
      img.sizes = sizes;
      img.dataset.sizes = sizes;
    }
  }

  function sizePages(group) {
    // With the toolbar at the top of the window, stage and thumbnails fill the rest of it.
    if (!document.fullscreenElement) {
      const height = Math.max(240, window.innerHeight - toolbar.offsetHeight - (thumbsNav ? thumbsNav.offsetHeight : 0));
      stage.style.height = `${height}px`;
    }
    const availW = stage.clientWidth - 24;
    const availH = stage.clientHeight - 24;
    if (mode === "paged") {
      const perW = spread ? availW / 2 : availW;
      for (const n of group) {
        const w = Math.max(80, Math.min(perW, availH / ratioOf(n)) * zoom);
        sizeFigure(figureOf(n), w);
      }
    } else {
      const w = Math.max(80, Math.min(availW, 960) * zoom);
      for (const f of figures) sizeFigure(f, w);
    }
  }

  function prepare(n) {
    const f = figureOf(n);
    if (!f || f.dataset.prepared) return;
    f.dataset.prepared = "1";
    const thumb = thumbSrc(n);
    // The small image shows at once while the reading size loads over it.
    if (thumb) f.style.backgroundImage = `url("${thumb}")`;
    firstShown.then(() => buildTextLayer(n));
  }

  // The first page shown has the connection to itself: text and pages ahead wait until it is in.
  const firstImage = figureOf(clamp(Number(reader.dataset.startPage || 1))).querySelector("img");
  const firstShown = firstImage.complete
    ? Promise.resolve()
    : new Promise((resolve) => {
        firstImage.addEventListener("load", resolve, { once: true });
        firstImage.addEventListener("error", resolve, { once: true });
      });

  function preloadAfter(group) {
    firstShown.then(() => preloadNow(group));
  }

  function preloadNow(group) {
    const last = group[group.length - 1];
    for (let n = last + 1; n <= Math.min(total, last + AHEAD); n++) {
      const page = figureOf(n).querySelector("img");
      const img = new Image();
      img.decoding = "async";
      // The same choice from srcset as the page's own image will make, so the copy fetched is the one shown.
      if (page.getAttribute("srcset")) {
        img.sizes = page.sizes;
        img.srcset = page.getAttribute("srcset");
      }
      img.src = readSrc(n);
    }
  }

  function render(scroll) {
    decideSpread();
    const group = groupOf(current);
    if (mode === "paged") {
      for (const f of figures) f.classList.toggle("shown", group.includes(Number(f.dataset.page)));
      for (const n of group) {
        prepare(n);
        figureOf(n).querySelector("img").loading = "eager";
      }
      preloadAfter(group);
      if (scroll) stage.scrollTo(0, 0);
    } else if (scroll) {
      prepare(current);
      figureOf(current).scrollIntoView({ block: "start" });
    }
    sizePages(group);
    for (const n of group) {
      const layer = figureOf(n).querySelector(".text-layer");
      if (layer) fitWords(layer);
    }
  }

  function showNumber() {
    pageInput.value = String(current);
    for (const a of thumbLinks) {
      if (Number(a.dataset.page) === current) {
        a.setAttribute("aria-current", "page");
        // Scrolls the strip only (scrollIntoView would move the whole page too).
        const strip = a.closest("ol");
        strip.scrollLeft = a.offsetLeft - strip.offsetLeft - (strip.clientWidth - a.offsetWidth) / 2;
      } else a.removeAttribute("aria-current");
    }
    const hash = `#page=${current}`;
    if (location.hash !== hash) history.replaceState(null, "", location.pathname + location.search + hash);
  }

  function go(n) {
    if (!Number.isFinite(n)) return;
    current = clamp(Math.round(n));
    render(true);
    showNumber();
  }

  function next() {
    const group = groupOf(current);
    go(group[group.length - 1] + 1);
  }
  function prev() {
    const group = groupOf(current);
    go(groupOf(clamp(group[0] - 1))[0]);
  }

  function setZoom(z) {
    zoom = Math.min(4, Math.max(0.5, z));
    stage.classList.toggle("zoomed", zoom > 1);
    render(false);
  }

  function setMode(m) {
    mode = m;
    reader.dataset.mode = m;
    modeButton.setAttribute("aria-pressed", String(m === "scroll"));
    if (m === "scroll") for (const f of figures) f.classList.remove("shown");
    render(true);
  }

  // ---- text layer and search highlights ----
  function loadPageText(n) {
    if (!textLoading.has(n)) {
      const url = `${reader.dataset.text}/${n}.json?v=${encodeURIComponent(reader.dataset.version)}`;
      textLoading.set(n, fetch(url, { credentials: "same-origin" })
        .then((r) => (r.ok ? r.json() : { words: [] }))
        .catch(() => ({ words: [] }))
        .then((page) => {
          textPages.set(n, page);
          buildTextLayer(n);
        }));
    }
    return textLoading.get(n);
  }

  function buildTextLayer(n) {
    if (!textPages.has(n)) {
      loadPageText(n); // builds the layer once the page's text arrives
      return;
    }
    const f = figureOf(n);
    if (f.querySelector(".text-layer")) return;
    const layer = document.createElement("div");
    layer.className = "text-layer";
    // The figcaption already gives screen readers the text; this copy is for selecting and copying.
    layer.setAttribute("aria-hidden", "true");
    const page = textPages.get(n);
    for (const w of Array.isArray(page.words) ? page.words : []) {
      const span = document.createElement("span");
      span.textContent = `${w.text} `;
      span.style.left = `${w.x * 100}%`;
      span.style.top = `${w.y * 100}%`;
      span.style.fontSize = `${w.h * 100 * 0.92}cqh`;
      span.dataset.w = String(w.w);
      layer.appendChild(span);
    }
    f.appendChild(layer);
    fitWords(layer);
    highlight(n);
  }

  /**
   * Stretches each word to its box on the page, so a selection covers what the reader sees. The
   * font scales with the page (cqh), so the ratio holds at every zoom: measured once, all reads
   * before all writes.
   */
  function fitWords(layer) {
    const width = layer.clientWidth;
    if (!width || layer.dataset.fitted) return;
    layer.dataset.fitted = "1";
    const spans = Array.from(layer.children);
    const natural = spans.map((s) => s.getBoundingClientRect().width);
    spans.forEach((s, i) => {
      if (natural[i] > 0) s.style.transform = `scaleX(${(Number(s.dataset.w) * width) / natural[i]})`;
    });
  }

  function highlight(n) {
    const f = figureOf(n);
    for (const old of f.querySelectorAll(".hl")) old.remove();
    const page = textPages.get(n);
    if (!terms.length || !page || !Array.isArray(page.words)) return;
    for (const w of page.words) {
      const word = fold(w.text);
      if (!terms.some((t) => word.includes(t))) continue;
      const box = document.createElement("div");
      box.className = "hl";
      box.style.left = `${w.x * 100}%`;
      box.style.top = `${w.y * 100}%`;
      box.style.width = `${w.w * 100}%`;
      box.style.height = `${w.h * 100}%`;
      f.appendChild(box);
    }
  }

  function search(query, jump) {
    const clean = query.trim();
    terms = fold(clean).split(/\s+/).filter(Boolean);
    const asked = terms.length
      ? fetch(`${reader.dataset.search}?q=${encodeURIComponent(clean)}`, { credentials: "same-origin" })
        .then((r) => (r.ok ? r.json() : { hits: [] }))
        .catch(() => ({ hits: [] }))
      : Promise.resolve({ hits: [] });
    return asked.then(({ hits }) => {
      for (const f of figures) if (f.dataset.prepared) highlight(Number(f.dataset.page));
      results.replaceChildren();
      if (terms.length) {
        const p = document.createElement("p");
        p.textContent = hits.length ? `${hits.length} ${hits.length === 1 ? "page" : "pages"} with “${clean}”:` : `No page contains “${clean}”.`;
        const list = document.createElement("ol");
        for (const h of hits.slice(0, 200)) {
          const li = document.createElement("li");
          const a = document.createElement("a");
          a.href = `#page=${h.page}`;
          a.dataset.page = String(h.page);
          a.textContent = `Page ${h.page}`;
          li.append(a);
          list.append(li);
        }
        results.append(p);
        if (hits.length) results.append(list);
      }
      if (jump && hits.length) go(hits[0].page);
      return hits;
    });
  }

  // ---- wiring ----
  toolbar.addEventListener("click", (e) => {
    const button = e.target.closest("button[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    if (action === "next") next();
    else if (action === "prev") prev();
    else if (action === "zoom-in") setZoom(zoom * 1.25);
    else if (action === "zoom-out") setZoom(zoom / 1.25);
    else if (action === "mode") setMode(mode === "paged" ? "scroll" : "paged");
    else if (action === "fullscreen") {
      if (document.fullscreenElement) document.exitFullscreen();
      else if (reader.requestFullscreen) reader.requestFullscreen().catch(() => {});
    }
  });

  reader.querySelector("[data-role=goto]").addEventListener("submit", (e) => {
    e.preventDefault();
    go(Number(pageInput.value));
  });
  pageInput.addEventListener("change", () => go(Number(pageInput.value)));

  document.addEventListener("click", (e) => {
    const link = e.target.closest("a[data-page]");
    if (!link || !(link.closest(".thumbs") || link.closest("[data-role=results]"))) return;
    e.preventDefault();
    go(Number(link.dataset.page));
  });

  if (searchForm) {
    searchForm.addEventListener("submit", (e) => {
      e.preventDefault();
      const q = searchForm.querySelector("input[name=q]").value;
      const params = new URLSearchParams(location.search);
      if (q.trim()) params.set("q", q);
      else params.delete("q");
      const qs = params.toString();
      history.replaceState(null, "", location.pathname + (qs ? `?${qs}` : "") + location.hash);
      search(q, true);
    });
  }

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.metaKey || e.ctrlKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (e.key === "ArrowRight" || (mode === "paged" && (e.key === "PageDown" || e.key === "ArrowDown" && zoom <= 1))) next();
    else if (e.key === "ArrowLeft" || (mode === "paged" && (e.key === "PageUp" || e.key === "ArrowUp" && zoom <= 1))) prev();
    else if (e.key === "Home") go(1);
    else if (e.key === "End") go(total);
    else if (e.key === "+" || e.key === "=") setZoom(zoom * 1.25);
    else if (e.key === "-") setZoom(zoom / 1.25);
    else return;
    e.preventDefault();
  });

  // Clicking the outer fifth of a page turns it, unless text is being selected or the page is zoomed.
  stage.addEventListener("click", (e) => {
    if (mode !== "paged" || zoom > 1 || dragged) return;
    const sel = window.getSelection();
    if (sel && !sel.isCollapsed) return;
    const shown = figures.filter((f) => f.classList.contains("shown"));
    if (!shown.length) return;
    const left = shown[0].getBoundingClientRect().left;
    const right = shown[shown.length - 1].getBoundingClientRect().right;
    const edge = (right - left) * 0.2;
    if (e.clientX < left + edge) prev();
    else if (e.clientX > right - edge) next();
  });

  stage.addEventListener("wheel", (e) => {
    if (!e.ctrlKey) return;
    e.preventDefault();
    setZoom(zoom * (e.deltaY < 0 ? 1.1 : 1 / 1.1));
  }, { passive: false });

  // Touch: one finger swipes between pages (at normal size), two fingers pinch to zoom.
  let touchStart = null;
  let pinch = null;
  const distance = (t) => Math.hypot(t[0].clientX - t[1].clientX, t[0].clientY - t[1].clientY);
  stage.addEventListener("touchstart", (e) => {
    if (e.touches.length === 2) {
      pinch = { d: distance(e.touches), zoom };
      touchStart = null;
    } else if (e.touches.length === 1) touchStart = { x: e.touches[0].clientX, y: e.touches[0].clientY };
  }, { passive: true });
  stage.addEventListener("touchmove", (e) => {
    if (pinch && e.touches.length === 2) {
      e.preventDefault();
      setZoom(pinch.zoom * (distance(e.touches) / pinch.d));
    }
  }, { passive: false });
  stage.addEventListener("touchend", (e) => {
    if (pinch && e.touches.length < 2) pinch = null;
    if (!touchStart || mode !== "paged" || zoom > 1) return;
    const t = e.changedTouches[0];
    const dx = t.clientX - touchStart.x;
    const dy = t.clientY - touchStart.y;
    touchStart = null;
    if (Math.abs(dx) > 50 && Math.abs(dx) > Math.abs(dy) * 1.5) (dx < 0 ? next : prev)();
  });

  // Mouse drag pans a zoomed page.
  let drag = null;
  let dragged = false;
  stage.addEventListener("pointerdown", (e) => {
    dragged = false;
    if (zoom <= 1 || e.pointerType !== "mouse" || e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, left: stage.scrollLeft, top: stage.scrollTop };
    stage.classList.add("panning");
  });
  window.addEventListener("pointermove", (e) => {
    if (!drag) return;
    if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 4) dragged = true;
    stage.scrollLeft = drag.left - (e.clientX - drag.x);
    stage.scrollTop = drag.top - (e.clientY - drag.y);
  });
  window.addEventListener("pointerup", () => {
    drag = null;
    stage.classList.remove("panning");
  });

  // In continuous mode the page most in view is the current one.
  const observer = new IntersectionObserver((entries) => {
    if (mode !== "scroll") return;
    for (const entry of entries) {
      const n = Number(entry.target.dataset.page);
      if (entry.isIntersecting) prepare(n);
      if (entry.isIntersecting && entry.intersectionRatio >= 0.5 && n !== current) {
        current = n;
        showNumber();
      }
    }
  }, { root: stage, threshold: [0, 0.5], rootMargin: "50% 0px" });
  for (const f of figures) observer.observe(f);

  const pageFromHash = () => {
    const m = /^#page=(\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : null;
  };
  window.addEventListener("hashchange", () => {
    const n = pageFromHash();
    if (n !== null && n !== current) go(n);
  });
  window.addEventListener("resize", () => render(false));
  document.addEventListener("fullscreenchange", () => render(false));
  for (const f of figures) f.querySelector("img").addEventListener("load", () => render(false), { once: true });

  const fromHash = pageFromHash();
  go(fromHash ?? Number(reader.dataset.startPage || 1));
  // Opened at a page or a search: the reader wants the page, so the document's header scrolls away.
  const q = new URLSearchParams(location.search).get("q");
  if (fromHash !== null || (q && q.trim())) window.scrollTo(0, toolbar.getBoundingClientRect().top + window.scrollY);
  else window.scrollTo(0, 0);
  if (q && q.trim()) search(q, fromHash === null);
})();
