/* global document, window */
/* The sharing page of Quire's app: the preview follows the start page and size as they are typed. */
(function () {
  "use strict";
  var form = document.getElementById("embed-form");
  var frame = document.getElementById("embed-preview");
  if (!form || !frame) return;
  var path = form.getAttribute("data-embed-path");
  var timer = null;
  function whole(input, fallback) {
    var n = Math.floor(Number(input.value));
    var max = Number(input.getAttribute("max"));
    return n >= 1 && n <= max ? n : fallback;
  }
  function update() {
    var page = whole(form.elements.readerStartPage, 1);
    frame.width = String(whole(form.elements.width, 525));
    frame.height = String(whole(form.elements.height, 340));
    var src = path + "?page=" + page;
    // Reloaded only once typing pauses, and only when the page changed.
    if (frame.getAttribute("src") !== src) {
      clearTimeout(timer);
      timer = setTimeout(function () { frame.setAttribute("src", src); }, 300);
    }
  }
  form.addEventListener("input", update);
  // A form the browser filled again (back, reload) shows its own values in the preview, not the page's first ones.
  update();
  window.addEventListener("pageshow", update);
})();
