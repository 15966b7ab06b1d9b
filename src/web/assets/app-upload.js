/* global document, window, XMLHttpRequest, FormData, URLSearchParams */
/*
 * The upload page of Quire's app: many files at once, each sent on its own request with its own
 * progress bar, speed, time left and cancel button; a refused file says why without stopping the
 * others; then each document's state follows live until it is published or has failed.
 */
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  if (!form) return;
  var csrf = (document.querySelector('meta[name="csrf-token"]') || { getAttribute: function () { return ""; } }).getAttribute("content");
  var role = function (name) { return form.querySelector('[data-role="' + name + '"]'); };
  var drop = role("drop");
  var input = role("files");
  var list = role("list");
  var announce = role("announce");
  var maxBytes = Number(form.getAttribute("data-max-bytes"));
  var maxSize = form.getAttribute("data-max-size");
  var statesUrl = form.getAttribute("data-states-url");
  /** Files sent at once: enough to fill a link, few enough that each still moves. */
  var PARALLEL = 3;
  var queue = [];
  var running = 0;
  var polled = {};

  function say(text) {
    announce.textContent = text;
  }

  function formatBytes(n) {
    if (n >= 1024 * 1024) return (n / (1024 * 1024)).toFixed(1) + " MiB";
    return Math.max(1, Math.round(n / 1024)) + " KiB";
  }

  function formatSeconds(s) {
    if (!isFinite(s)) return "";
    if (s < 60) return "about " + Math.max(1, Math.round(s)) + (Math.round(s) === 1 ? " second" : " seconds") + " left";
    var m = Math.round(s / 60);
    return "about " + m + (m === 1 ? " minute" : " minutes") + " left";
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** One row of the list: name, size, bar, words, and a cancel button while it can be cancelled. */
  function row(label, size) {
    var li = el("li", "upload-item");
    li.setAttribute("data-phase", "waiting");
    var head = el("div", "upload-head");
    head.appendChild(el("span", "upload-name", label));
    if (size !== undefined) head.appendChild(el("span", "upload-size", formatBytes(size)));
    li.appendChild(head);
    var bar = el("progress", "upload-bar");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Upload of " + label);
    li.appendChild(bar);
    var status = el("p", "upload-status", "Ready to upload");
    li.appendChild(status);
    var cancel = el("button", "upload-cancel", "Cancel");
    cancel.type = "button";
    cancel.setAttribute("aria-label", "Cancel " + label);
    li.appendChild(cancel);
    list.appendChild(li);
    return { li: li, bar: bar, status: status, cancel: cancel, label: label };
  }

  function finish(item, phase, words, link) {
    item.li.setAttribute("data-phase", phase);
    item.status.textContent = words;
    if (link) {
      item.status.appendChild(document.createTextNode(" "));
      var a = el("a", "", link.text);
      a.href = link.href;
      item.status.appendChild(a);
    }
    if (item.cancel.parentNode) item.cancel.parentNode.removeChild(item.cancel);
    if (phase !== "converting") say(item.label + ": " + words);
  }

  /** The batch's details as the form holds them now, for every file of the batch. */
  function batchFields() {
    var fields = [];
    Array.prototype.forEach.call(form.elements, function (f) {
      if (!f.name || f.name === "_csrf" || f.name === "slurpUrl" || f.disabled) return;
      if ((f.type === "checkbox" || f.type === "radio") && !f.checked) return;
      fields.push([f.name, f.value]);
    });
    return fields;
  }

  function added(item, doc) {
    finish(item, "converting", "Uploaded. " + (doc.contentNote ? doc.contentNote + " " : "") + "Converting…", { text: "Open", href: doc.href });
    item.bar.value = 100;
    if (doc.earlier) {
      // The same content was uploaded before: kept all the same, but said, with a link to the first one.
      var note = el("p", "upload-earlier", "This file was already uploaded as ");
      var a = el("a", "", doc.earlier.title);
      a.href = doc.earlier.href;
      note.appendChild(a);
      note.appendChild(document.createTextNode("."));
      item.li.appendChild(note);
      say(item.label + ": already uploaded as " + doc.earlier.title + ".");
    }
    polled[doc.documentId] = { item: item, doc: doc };
    poll();
  }

  function refused(item, words) {
    finish(item, "refused", "Refused: " + words);
  }

  function send(item) {
    running++;
    var xhr = new XMLHttpRequest();
    var started = Date.now();
    var body = new FormData();
    item.fields.forEach(function (f) { body.append(f[0], f[1]); });
    body.append("file", item.file, item.file.name);
    item.li.setAttribute("data-phase", "uploading");
    item.status.textContent = "Uploading…";
    item.cancel.onclick = function () { xhr.abort(); };
    xhr.upload.onprogress = function (e) {
      if (!e.lengthComputable) return;
      item.bar.value = Math.floor((e.loaded / e.total) * 100);
      var seconds = (Date.now() - started) / 1000;
      var speed = seconds > 0 ? e.loaded / seconds : 0;
      item.status.textContent = "Uploading: " + item.bar.value + "% · " + formatBytes(speed) + "/s" + (speed > 0 ? " · " + formatSeconds((e.total - e.loaded) / speed) : "");
    };
    xhr.onload = function () {
      var answer = {};
      try { answer = JSON.parse(xhr.responseText); } catch { /* not JSON: said below */ }
      if (xhr.status === 201 && answer.document) added(item, answer.document);
      else refused(item, answer.error || "The server refused this file.");
    };
    xhr.onerror = function () { refused(item, "The connection was lost. The file was not uploaded."); };
    xhr.onabort = function () { finish(item, "cancelled", "Cancelled. Nothing was kept."); };
    xhr.onloadend = function () {
      running--;
      next();
    };
    xhr.open("POST", form.getAttribute("data-upload-url"));
    xhr.setRequestHeader("x-csrf-token", csrf);
    xhr.setRequestHeader("accept", "application/json");
    xhr.send(body);
  }

  function next() {
    while (running < PARALLEL && queue.length > 0) send(queue.shift());
  }

  /** Files are listed as soon as they are chosen; the Upload button sends them with the batch's details. */
  var chosen = [];
  function choose(files) {
    Array.prototype.forEach.call(files, function (file) {
      var item = row(file.name, file.size);
      item.file = file;
      // The server says the same; saying it now spares sending a file that cannot be kept.
      if (file.size > maxBytes) return refused(item, "The file is larger than the " + maxSize + " this server accepts.");
      if (file.size === 0) return refused(item, "The file is empty (0 bytes): there is nothing to publish.");
      item.cancel.onclick = function () {
        var wasChosen = chosen.indexOf(item) !== -1;
        chosen = chosen.filter(function (c) { return c !== item; });
        queue = queue.filter(function (c) { return c !== item; });
        finish(item, "cancelled", "Cancelled.");
        if (wasChosen) say(chosen.length === 0 ? "No files chosen yet." : chosen.length + (chosen.length === 1 ? " file" : " files") + " ready to upload.");
      };
      chosen.push(item);
    });
    say(chosen.length === 0 ? "No files ready to upload." : chosen.length + (chosen.length === 1 ? " file" : " files") + " ready to upload. Press Upload to send " + (chosen.length === 1 ? "it." : "them."));
  }

  function sendAddress(address) {
    var item = row(address);
    item.cancel.parentNode.removeChild(item.cancel);
    item.status.textContent = "Sending the address…";
    var params = new URLSearchParams();
    batchFields().forEach(function (f) { params.append(f[0], f[1]); });
    params.append("slurpUrl", address);
    fetch(form.getAttribute("data-url-upload-url"), {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", "x-csrf-token": csrf },
      body: params.toString(),
    }).then(function (r) { return r.json().then(function (answer) { return { ok: r.status === 201, answer: answer }; }); })
      .then(function (r) {
        if (r.ok) added(item, r.answer.document);
        else refused(item, r.answer.error || "The server refused this address.");
      }, function () { refused(item, "The connection was lost. Nothing was uploaded."); });
  }

  var delay = 1000;
  var timer = null;
  function poll() {
    if (timer !== null) return;
    timer = setTimeout(function () {
      timer = null;
      var ids = Object.keys(polled);
      if (ids.length === 0) return;
      fetch(statesUrl + "?ids=" + encodeURIComponent(ids.join(",")), { headers: { accept: "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : { states: [] }; })
        .then(function (body) {
          body.states.forEach(function (s) {
            var p = polled[s.documentId];
            if (!p || s.state === "P") return;
            delete polled[s.documentId];
            if (s.state === "A") finish(p.item, "live", "Published." + (p.doc.contentNote ? " " + p.doc.contentNote : ""), { text: "Open", href: p.doc.href });
            else finish(p.item, "failed", "Failed: " + (s.reason || "the document could not be converted."), { text: "Details", href: p.doc.href });
          });
          delay = Math.min(delay * 1.2, 5000);
          poll();
        }, function () { delay = 5000; poll(); });
    }, delay);
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var fields = batchFields();
    var address = form.elements.slurpUrl.value.trim();
    if (chosen.length === 0 && address === "") {
      say("Choose files or give a web address first.");
      role("pick").focus();
      return;
    }
    chosen.forEach(function (item) {
      item.fields = fields;
      item.status.textContent = "Waiting for its turn";
      queue.push(item);
    });
    if (chosen.length > 0) say("Uploading " + chosen.length + (chosen.length === 1 ? " file." : " files."));
    chosen = [];
    if (address !== "") {
      sendAddress(address);
      form.elements.slurpUrl.value = "";
    }
    next();
  });

  role("pick").addEventListener("click", function () { input.click(); });
  input.addEventListener("change", function () {
    choose(input.files);
    input.value = "";
  });
  drop.addEventListener("dragover", function (e) {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", function () { drop.classList.remove("over"); });
  drop.addEventListener("drop", function (e) {
    e.preventDefault();
    drop.classList.remove("over");
    if (e.dataTransfer && e.dataTransfer.files.length > 0) choose(e.dataTransfer.files);
  });
  window.quireUpload = { choose: choose };
})();
