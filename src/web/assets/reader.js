/* global document, window, history, location, IntersectionObserver, Image, URLSearchParams */
// The reader's one script: plain browser JavaScript, no framework, no build step. Everything it
// needs comes from the server's HTML (data- attributes), each page's text (text/<n>.json) and the
// server's search (search.json); without it
// the page stays a readable list of page images with their text.
"use strict";

(() => {
  const root = document.documentElement;
  root.classList.remove("no-js");
  // "js" is set before the first paint by the page's head (page-layout.ts); "js-ran" says this script runs.
  root.classList.add("js", "js-ran");

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

  const total = Number(reader.dataset.pages);
  const figures = Array.from(reader.querySelectorAll(".page"));
  const thumbLinks = Array.from(reader.querySelectorAll(".thumbs a"));
  const toolbar = reader.querySelector(".toolbar");
  const pageInput = reader.querySelector("#page-number");
  const searchForm = document.querySelector("[data-role=search]");
  const results = document.querySelector("[data-role=results]");
  const modeButton = reader.querySelector("[data-action=mode]");
  const readerBody = reader.querySelector(".reader-body");
  const details = document.querySelector(".doc-details");

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
    // The HTML's cap (reader-page.ts DENSITY_CAP), with its numbers: from 2.5 device pixels per CSS
    // pixel the slot is taken as 0.667 of its width (a 3x phone takes the image a 2x one would).
    // Any other factor would make the script choose another image than the HTML between 2.5x and
    // 3x, and page 1 would be fetched twice.
    const want = Math.ceil((window.devicePixelRatio || 1) >= 2.5 ? w * 0.667 : w);
    const sizes = `${want}px`;
    // Never smaller than what is shown already: zooming out must not fetch a smaller copy.
    const shown = Number((img.dataset.sizes || "0").replace("px", ""));
    if (img.hasAttribute("srcset") && want > shown) {
      img.sizes = sizes;
      img.dataset.sizes = sizes;
    }
  }

  /**
   * The stage takes what the first screen leaves under the bar, the search results and the toolbar,
   * so page 1 is seen whole without scrolling. Only when that leaves too little (a window on its side)
   * does it take the window below the sticky toolbar, the header scrolled away.
   */
  let fitsFirstScreen = true;
  function sizePages(group) {
    // The first screen's flex layout (reader.css) gives the stage its height; only a window too
    // short for it gets one from here.
    stage.style.height = "";
    stage.classList.remove("fixed-height");
    if (!document.fullscreenElement) {
      const below = thumbsNav ? thumbsNav.offsetHeight : 0;
      const top = stage.getBoundingClientRect().top + window.scrollY;
      fitsFirstScreen = window.innerHeight - top - below >= Math.min(320, window.innerHeight * 0.5);
      if (!fitsFirstScreen) {
        stage.classList.add("fixed-height");
        stage.style.height = `${Math.max(160, Math.floor(window.innerHeight - toolbar.offsetHeight - below))}px`;
      }
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
    showHit();
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

  /** A snippet as text with the query's words in <mark>, matched as the server matches (folded). */
  function markedSnippet(snippet) {
    const chars = Array.from(snippet);
    let folded = "";
    const owner = [];
    chars.forEach((c, i) => {
      const f = fold(c);
      folded += f;
      for (let k = 0; k < f.length; k++) owner.push(i);
    });
    const marked = chars.map(() => false);
    for (const t of terms) {
      for (let at = folded.indexOf(t); at !== -1; at = folded.indexOf(t, at + t.length)) {
        for (let k = at; k < at + t.length; k++) marked[owner[k]] = true;
      }
    }
    const out = document.createElement("span");
    out.className = "snippet";
    for (let i = 0; i < chars.length;) {
      let j = i;
      while (j < chars.length && marked[j] === marked[i]) j++;
      const text = chars.slice(i, j).join("");
      if (marked[i]) {
        const m = document.createElement("mark");
        m.textContent = text;
        out.append(m);
      } else out.append(text);
      i = j;
    }
    return out;
  }

  /** The pages the last search found, and which of them the reader is on (next/previous match). */
  let hitPages = [];
  let hitAt = -1;
  let hitStatus = null;
  function showHit() {
    const group = groupOf(current);
    hitAt = hitPages.findIndex((n) => group.includes(n));
    for (const li of results ? results.querySelectorAll("li[data-hit]") : []) {
      if (Number(li.dataset.hit) === hitAt) {
        li.setAttribute("aria-current", "true");
        const list = li.parentElement;
        if (li.offsetTop < list.scrollTop || li.offsetTop + li.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = li.offsetTop - list.offsetTop;
      } else li.removeAttribute("aria-current");
    }
    if (hitStatus) hitStatus.textContent = hitAt === -1 ? "" : `Match ${hitAt + 1} of ${hitPages.length}`;
  }
  function stepHit(step) {
    if (!hitPages.length) return;
    const group = groupOf(current);
    // From a page between matches, "next" is the first match after it, "previous" the last before it.
    const target = step > 0
      ? hitPages.find((n) => n > group[group.length - 1]) ?? hitPages[0]
      : [...hitPages].reverse().find((n) => n < group[0]) ?? hitPages[hitPages.length - 1];
    go(target);
  }
  /** A results button: its sign always shown, its word only where there is room (reader.css). */
  const button = (label, action, sign, word) => {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.action = action;
    b.setAttribute("aria-label", label);
    b.title = label;
    const w = document.createElement("span");
    w.className = "button-word";
    w.textContent = word || "";
    if (action === "next-hit") b.append(w, sign);
    else b.append(sign, w);
    return b;
  };

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
      hitPages = hits.slice(0, 200).map((h) => h.page);
      hitStatus = null;
      if (terms.length) {
        const head = document.createElement("div");
        head.className = "results-head";
        const p = document.createElement("p");
        p.className = "results-count";
        p.textContent = hits.length ? `${hits.length} ${hits.length === 1 ? "page" : "pages"} with “${clean}”` : `No page contains “${clean}”.`;
        head.append(p);
        if (hits.length) {
          hitStatus = document.createElement("span");
          hitStatus.className = "hit-status";
          head.append(hitStatus, button("Previous match", "prev-hit", "‹", " Previous"), button("Next match", "next-hit", "›", "Next "));
        }
        head.append(button("Close the search results", "close-results", "×"));
        const list = document.createElement("ol");
        hits.slice(0, 200).forEach((h, i) => {
          const li = document.createElement("li");
          li.dataset.hit = String(i);
          const a = document.createElement("a");
          a.href = `#page=${h.page}`;
          a.dataset.page = String(h.page);
          a.textContent = `Page ${h.page}`;
          li.append(a, " ", markedSnippet(typeof h.snippet === "string" ? h.snippet : ""));
          list.append(li);
        });
        results.append(head);
        if (hits.length) results.append(list);
      }
      if (jump && hits.length) go(hits[0].page);
      else {
        showHit();
        render(false);
      }
      return hits;
    });
  }

  // The embed has no search of its own.
  if (results) results.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-action]");
    if (!b) return;
    if (b.dataset.action === "next-hit") stepHit(1);
    else if (b.dataset.action === "prev-hit") stepHit(-1);
    else if (b.dataset.action === "close-results") {
      results.replaceChildren();
      hitPages = [];
      hitStatus = null;
      render(false);
      const input = searchForm && searchForm.querySelector("input[name=q]");
      if (input) input.focus();
    }
  });

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
    else if (action === "fullscreen") toggleFullscreen();
  });

  // Full screen holds the pages alone; a corner button (shown on focus, hover or a tap) leaves it.
  const fsExit = document.createElement("button");
  fsExit.type = "button";
  fsExit.className = "fs-exit";
  fsExit.textContent = "Exit full screen";
  readerBody.append(fsExit);
  function toggleFullscreen() {
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    else if (readerBody.requestFullscreen) readerBody.requestFullscreen().then(() => stage.focus({ preventScroll: true })).catch(() => {});
  }
  fsExit.addEventListener("click", toggleFullscreen);

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
    // Space (Shift+Space back) turns the page as in other readers, except where it presses a control.
    // Elsewhere (the comments under the reader) Space scrolls the window as it always does.
    if (e.key === " " && !(t === document.body || (t.closest && t.closest(".reader-body") && !t.closest("button, summary, audio, [role=button]")))) return;
    if (e.key === " ") (e.shiftKey ? prev : next)();
    else if (e.key === "ArrowRight" || (mode === "paged" && (e.key === "PageDown" || e.key === "ArrowDown" && zoom <= 1))) next();
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
    else if (document.fullscreenElement) readerBody.classList.toggle("controls");
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
  stage.addEventListener("touchcancel", () => {
    touchStart = null;
    pinch = null;
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
  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement) readerBody.classList.remove("controls");
    render(false);
  });
  if (details) {
    details.addEventListener("toggle", () => render(false));
    // Open over the pages, the panel closes as a menu does: Escape (back to its button) or a click elsewhere.
    details.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || !details.open) return;
      details.open = false;
      details.querySelector("summary").focus();
    });
    document.addEventListener("click", (e) => {
      if (details.open && !details.contains(e.target)) details.open = false;
    });
  }
  for (const f of figures) f.querySelector("img").addEventListener("load", () => render(false), { once: true });

  const fromHash = pageFromHash();
  go(fromHash ?? Number(reader.dataset.startPage || 1));
  // The reader fits the first screen; only when it cannot does it scroll the header away at a page or a search.
  const q = new URLSearchParams(location.search).get("q");
  if (!fitsFirstScreen && (fromHash !== null || (q && q.trim()))) window.scrollTo(0, toolbar.getBoundingClientRect().top + window.scrollY);
  else window.scrollTo(0, 0);
  if (q && q.trim()) search(q, fromHash === null);
  // Every handler is in place: what a reader does from now on is the reader's (tests wait for this).
  reader.dataset.ready = "true";
})();
