/* global document, window, uPlot, ResizeObserver */
/*
 * Quire's statistics pages: draws each chart from the table beside it (the table is the figures;
 * the chart only shows them), with uPlot served from this site. Without script, the tables remain.
 */
(function () {
  "use strict";
  if (typeof uPlot !== "function") return;

  function columns(table) {
    const rows = Array.from(table.tBodies[0].rows);
    return rows.map(function (row) {
      return Array.from(row.cells).map(function (cell) {
        return cell.dataset.value !== undefined ? Number(cell.dataset.value) : cell.textContent.trim();
      });
    });
  }

  function widthOf(el) {
    return Math.max(280, Math.floor(el.getBoundingClientRect().width));
  }

  function daysChart(el, table) {
    const rows = columns(table);
    const x = rows.map(function (r) { return Date.parse(r[0] + "T00:00:00Z") / 1000; });
    const views = rows.map(function (r) { return Number(r[1]); });
    const reads = rows.map(function (r) { return Number(r[2]); });
    return new uPlot({
      width: widthOf(el),
      height: 260,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); },
      scales: { y: { range: function (u, min, max) { return [0, Math.max(4, max)]; } } },
      series: [
        {},
        { label: "Views", stroke: "#0b57a4", width: 2, fill: "rgba(11, 87, 164, 0.10)" },
        { label: "Reads", stroke: "#c25400", width: 2, dash: [6, 3] },
      ],
      axes: [{}, { values: function (u, splits) { return splits.map(function (v) { return v % 1 === 0 ? String(v) : ""; }); } }],
    }, [x, views, reads], el);
  }

  function depthChart(el, table) {
    const rows = columns(table);
    const x = rows.map(function (r) { return Number(r[0]); });
    const share = rows.map(function (r) { return Math.round(Number(r[2]) * 1000) / 10; });
    return new uPlot({
      width: widthOf(el),
      height: 220,
      scales: { x: { time: false }, y: { range: [0, 100] } },
      series: [
        { label: "Page" },
        { label: "Readers who reached it (%)", stroke: "#2e7d32", width: 2, fill: "rgba(46, 125, 50, 0.12)", paths: uPlot.paths.stepped({ align: 1 }) },
      ],
      axes: [
        { values: function (u, splits) { return splits.map(function (v) { return v % 1 === 0 ? String(v) : ""; }); } },
        { values: function (u, splits) { return splits.map(function (v) { return v + "%"; }); } },
      ],
    }, [x, share], el);
  }

  const charts = [];
  for (const el of document.querySelectorAll(".stats-chart[data-table]")) {
    const table = document.getElementById(el.dataset.table);
    if (!table || table.tBodies[0].rows.length === 0) continue;
    const chart = el.dataset.chart === "depth" ? depthChart(el, table) : daysChart(el, table);
    charts.push([el, chart]);
  }
  if (charts.length && typeof ResizeObserver === "function") {
    const ro = new ResizeObserver(function () {
      for (const [el, chart] of charts) chart.setSize({ width: widthOf(el), height: chart.height });
    });
    for (const [el] of charts) ro.observe(el);
  }
  void window;
})();
