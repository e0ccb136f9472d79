// litdata view: the page. Every string from a dataset goes into the page as text
// (textContent), never as HTML; the server's Content-Security-Policy runs no inline script.
"use strict";

const PAGE = 50;
const state = { ds: 0, start: 0, items: 0, filter: null, selected: null, searching: 0, statsTimer: null };

function $(id) { return document.getElementById(id); }

function el(tag, props, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key === "data") for (const [k, v] of Object.entries(value)) node.dataset[k] = String(v);
    else node.setAttribute(key, value);
  }
  for (const child of children || []) node.append(child);
  return node;
}

function size(bytes) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes, unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
  return (unit ? value.toFixed(1) : String(value)) + " " + units[unit];
}

function showCost(cost) {
  if (!cost) return;
  $("cost").textContent = cost.in_place && !cost.requests
    ? "read in place (memory-mapped): 0 requests"
    : "this view read " + cost.requests + " request" + (cost.requests === 1 ? "" : "s") + ", " + size(cost.bytes);
}

function query(params) { return new URLSearchParams(Object.assign({ ds: state.ds }, params)).toString(); }

async function api(path, params) {
  const response = await fetch("/api/" + path + "?" + query(params || {}));
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  showCost(body.cost);
  return body;
}

function fieldUrl(index, name, view, ds) {
  return "/api/field?" + new URLSearchParams({ ds: ds === undefined ? state.ds : ds, i: index, field: name, view: view });
}

// -- cells ------------------------------------------------------------------------------
function plot(values) {
  const canvas = el("canvas", { class: "plot", width: "200", height: "48" });
  const ctx = canvas.getContext("2d");
  const low = Math.min(...values), high = Math.max(...values), span = high - low || 1;
  ctx.strokeStyle = "#6d28d9";
  ctx.beginPath();
  values.forEach((v, k) => {
    const x = values.length > 1 ? (k / (values.length - 1)) * 199 : 100;
    const y = 46 - ((v - low) / span) * 44;
    if (k) ctx.lineTo(x, y); else ctx.moveTo(x, y);
  });
  ctx.stroke();
  return canvas;
}

function fmt(x) { return typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toPrecision(4)) : String(x); }

function textCell(cell, index, name, ds) {
  const span = el("span", { class: "text", text: cell.value });
  const box = el("div", {}, [span]);
  if (cell.cut) {
    const more = el("button", { type: "button", class: "more", text: "more (" + cell.length + " chars)" });
    more.addEventListener("click", async () => {
      const full = await fetch(fieldUrl(index, name, "text", ds)).then((r) => r.json());
      span.textContent = full.text;
      more.remove();
    });
    box.append(more);
  }
  return box;
}

function openFull(index, name, ds) {
  $("lightbox-img").src = fieldUrl(index, name, "full", ds);
  $("lightbox-caption").textContent = "sample " + index + " · " + name;
  $("lightbox").hidden = false;
}

function drawCell(cell, index, name, ds) {
  const body = [];
  switch (cell.kind) {
    case "image": {
      const img = el("img", { class: "thumb", alt: name + " of sample " + index, src: fieldUrl(index, name, "thumb", ds) });
      img.addEventListener("click", () => openFull(index, name, ds));
      body.push(img, el("div", { class: "mono", text: cell.width + "×" + cell.height }));
      break;
    }
    case "text": body.push(textCell(cell, index, name, ds)); break;
    case "number": case "bool": body.push(el("span", { class: "mono", text: String(cell.value) })); break;
    case "none": body.push(el("span", { class: "mono", text: "None" })); break;
    case "array": {
      const stats = cell.min === undefined ? "" : " min " + fmt(cell.min) + " max " + fmt(cell.max) + " mean " + fmt(cell.mean);
      body.push(el("div", { class: "mono", text: cell.dtype + "[" + cell.shape.join("×") + "]" + stats }));
      if (cell.plot) body.push(plot(cell.plot));
      if (cell.heat_map) body.push(el("img", { class: "heat", alt: "heat map", src: fieldUrl(index, name, "heat", ds) }));
      break;
    }
    case "bytes": body.push(el("div", { class: "mono", text: size(cell.size) + ": " + cell.hex })); break;
    case "audio": body.push(el("audio", { controls: "", preload: "none", src: fieldUrl(index, name, "media", ds) })); break;
    case "video": body.push(el("video", { controls: "", preload: "metadata", width: "200", src: fieldUrl(index, name, "media", ds) })); break;
    case "tree": body.push(el("details", {}, [el("summary", { text: "nested" }), el("pre", { class: "tree", text: JSON.stringify(cell.tree, null, 1) })])); break;
    case "error": body.push(el("span", { class: "error", text: cell.error })); break;
    default: body.push(el("span", { class: "mono", text: String(cell.value) }));
  }
  return el("div", { class: "cell", data: { field: name, kind: cell.kind } }, [el("span", { class: "cell-name", text: name }), ...body]);
}

function drawRow(row, ds, label) {
  const head = el("div", { class: "sample-head", text: (label || "") + "#" + row.index });
  const card = el("div", { class: "sample", data: { index: row.index } }, [head]);
  if (row.error) card.append(el("div", { class: "cell error", data: { kind: "error" }, text: row.error }));
  else for (const [name, cell] of Object.entries(row.cells)) card.append(drawCell(cell, row.index, name, ds));
  if (row.index === state.selected && ds === state.ds) card.classList.add("selected");
  return card;
}

// -- samples ----------------------------------------------------------------------------
async function showSamples() {
  const grid = $("grid");
  $("samples-error").hidden = true;
  let page;
  try {
    if (state.filter) {
      const slice = state.filter.indices.slice(state.start, state.start + PAGE);
      page = slice.length ? await api("samples", { indices: slice.join(",") }) : { rows: [] };
      const total = state.filter.indices.length;
      $("page-info").textContent = "matches " + (total ? state.start + 1 : 0) + "–" + Math.min(state.start + PAGE, total) + " of " + total;
    } else {
      page = await api("samples", { start: state.start, count: PAGE });
      $("page-info").textContent = "samples " + state.start + "–" + (state.start + page.rows.length - 1) + " of " + state.items;
    }
  } catch (error) { $("samples-error").textContent = error.message; $("samples-error").hidden = false; return; }
  grid.replaceChildren(...page.rows.map((row) => drawRow(row, state.ds)));
  const total = state.filter ? state.filter.indices.length : state.items;
  $("prev").disabled = state.start === 0;
  $("next").disabled = state.start + PAGE >= total;
  const chosen = grid.querySelector(".selected");
  if (chosen) chosen.scrollIntoView({ block: "center" });
}

function goTo(index, exact) {
  state.filter = null;
  showFilter();
  state.selected = index;
  state.start = exact ? index : Math.floor(index / PAGE) * PAGE;
  tab("samples");
}

function showFilter() {
  $("filter-info").textContent = state.filter ? "filtered: " + state.filter.label + " (" + state.filter.count + (state.filter.whole ? "" : " in the statistics sample") + ")" : "";
  $("filter-clear").hidden = !state.filter;
}

// -- overview ---------------------------------------------------------------------------
async function showOverview() {
  const info = await api("overview");
  $("summary").replaceChildren(...info.summary.map(([k, v]) => el("tr", {}, [el("td", { text: k }), el("td", { text: v })])));
  $("key-label").hidden = $("key-go").hidden = !info.keyed;
  const map = await api("chunks");
  const biggest = Math.max(1, ...map.chunks.map((c) => c.bytes));
  $("chunk-map").replaceChildren(...map.chunks.map((c, k) => {
    const bar = el("div", { class: "chunk-bar" + (c.cached ? " cached" : ""), title: c.name + ": " + c.items + " items, " + size(c.bytes) + (c.cached ? ", local" : ", not cached"), data: { chunk: k, start: c.start } });
    bar.style.height = Math.max(3, (100 * c.bytes) / biggest) + "%";
    bar.addEventListener("click", () => goTo(c.start, true));
    return bar;
  }));
  $("chunk-note").textContent = map.shown < map.total ? "showing the first " + map.shown + " of " + map.total + " chunks" : map.total + " chunks";
  showCost(info.cost);
}

// -- statistics -------------------------------------------------------------------------
function histogram(name, metric, bars) {
  const highest = Math.max(1, ...bars.map((b) => b.count));
  const row = el("div", { class: "histogram" }, bars.map((b, k) => {
    const bar = el("div", { class: "bar", title: fmt(b.lo) + " – " + fmt(b.hi) + ": " + b.count, data: { field: name, metric: metric, bar: k } });
    bar.style.height = (100 * b.count) / highest + "%";
    bar.addEventListener("click", () => filterBy({ field: name, metric: metric, bar: k }, name + " " + metric + " in [" + fmt(b.lo) + ", " + fmt(b.hi) + "]"));
    return bar;
  }));
  const axis = el("div", { class: "axis" }, [el("span", { text: fmt(bars[0].lo) }), el("span", { text: metric }), el("span", { text: fmt(bars[bars.length - 1].hi) })]);
  return el("div", {}, [row, axis]);
}

async function filterBy(params, label) {
  const found = await api("filter", params);
  state.filter = { indices: found.indices, count: found.count, whole: found.whole, label: label };
  state.start = 0;
  state.selected = null;
  showFilter();
  tab("samples");
}

function drawStats(stats) {
  const which = stats.whole ? "over all " + stats.items + " samples" : "over a uniform sample of " + stats.total + " of " + stats.items + " samples (seed " + stats.seed + ")";
  $("stats-progress").textContent = (stats.finished ? "done " : "computing: " + stats.done + " / " + stats.total + " ") + which + (stats.errors ? "; " + stats.errors + " samples failed to decode" : "");
  $("stats-fields").replaceChildren(...Object.entries(stats.fields).map(([name, field]) => {
    const box = el("div", { class: "field-stats", data: { field: name } }, [el("h3", { text: name }),
      el("div", { class: "hint", text: Object.entries(field.kinds).map(([k, n]) => k + " ×" + n).join(", ") + " · missing " + field.missing })]);
    for (const [metric, bars] of Object.entries(field.histograms)) if (bars.length) box.append(histogram(name, metric, bars));
    if (field.top) box.append(el("div", {}, field.top.map(([value, count]) => {
      const chip = el("button", { type: "button", class: "top-value", text: value + " (" + count + ")", data: { field: name, value: value } });
      chip.addEventListener("click", () => filterBy({ field: name, value: value }, name + " = " + value));
      return chip;
    })));
    return box;
  }));
  showCost(stats.cost);
}

async function showStats() {
  clearTimeout(state.statsTimer);
  const stats = await api("stats");
  drawStats(stats);
  if (!stats.finished && current === "stats") state.statsTimer = setTimeout(showStats, 300);
}

// -- search -----------------------------------------------------------------------------
async function runSearch() {
  const q = $("search-q").value;
  if (!q) return;
  const run = ++state.searching;
  const list = $("search-results");
  list.replaceChildren();
  $("search-stop").disabled = false;
  let start = 0, hits = 0, requests = 0, bytes = 0;
  try {
    while (start !== null && run === state.searching && hits < 500) {
      const found = await api("search", { q: q, start: start });
      if (run !== state.searching) break;
      for (const hit of found.hits) {
        const item = el("li", { class: "hit", data: { index: hit.index } }, [
          el("strong", { text: "#" + hit.index + " " + hit.field + ": " }), el("span", { text: hit.before }), el("mark", { text: hit.match }), el("span", { text: hit.after })]);
        item.addEventListener("click", () => goTo(hit.index));
        list.append(item);
      }
      hits += found.hits.length; requests += found.cost.requests; bytes += found.cost.bytes;
      start = found.next;
      $("search-info").textContent = hits + " hits in samples 0–" + found.scanned[1] + (start === null ? " (all searched)" : " …");
    }
  } catch (error) { $("search-info").textContent = error.message; }
  showCost({ requests: requests, bytes: bytes, in_place: requests === 0 });
  if (run === state.searching) $("search-stop").disabled = true;
}

// -- a training step --------------------------------------------------------------------
async function showStep() {
  const params = { step: $("step-n").value || "0" };
  if ($("step-epoch").value) params.epoch = $("step-epoch").value;
  let found;
  try { found = await api("step", params); } catch (error) { $("step-info").textContent = error.message; $("step-result").replaceChildren(); return; }
  $("step-info").textContent = found.ranks.length + " rank(s)";
  $("step-result").replaceChildren(...found.ranks.map((rank) => el("div", { class: "rank" }, [
    el("h3", { text: "rank " + rank.rank + ", epoch " + rank.epoch + ", step " + rank.step + ": " + rank.ids.length + " samples" }),
    el("div", { class: "grid-step" }, rank.rows.map((row) => drawRow(row, row.dataset, "dataset " + row.dataset + " "))),
  ])));
}

// -- tabs and wiring --------------------------------------------------------------------
let current = "overview";

function tab(name) {
  current = name;
  for (const section of document.querySelectorAll(".tab")) section.classList.toggle("active", section.id === name);
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === name);
  if (name === "overview") showOverview();
  else if (name === "samples") showSamples();
  else if (name === "stats") showStats();
}

async function start() {
  const listing = await fetch("/api/datasets").then((r) => r.json());
  $("dataset").replaceChildren(...listing.datasets.map((d) => el("option", { value: String(d.ds), text: d.name + " (" + d.items + ")" })));
  $("tabs").querySelector("[data-tab=step]").hidden = !listing.provenance;
  const pick = () => {
    state.ds = Number($("dataset").value);
    state.items = listing.datasets[state.ds].items;
    state.start = 0; state.filter = null; state.selected = null; state.searching += 1;
    showFilter();
    tab(current);
  };
  $("dataset").addEventListener("change", pick);
  for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => tab(button.dataset.tab));
  $("prev").addEventListener("click", () => { state.start = Math.max(0, state.start - PAGE); showSamples(); });
  $("next").addEventListener("click", () => { state.start += PAGE; showSamples(); });
  $("jump-go").addEventListener("click", () => {
    const index = Number($("jump").value);
    if (Number.isInteger(index) && index >= 0 && index < state.items) goTo(index);
    else { $("samples-error").textContent = "no sample " + $("jump").value + ": the dataset has " + state.items; $("samples-error").hidden = false; }
  });
  $("jump").addEventListener("keydown", (e) => { if (e.key === "Enter") $("jump-go").click(); });
  $("key-go").addEventListener("click", async () => {
    try { goTo((await api("key", { key: $("key").value })).index); }
    catch (error) { $("samples-error").textContent = error.message; $("samples-error").hidden = false; }
  });
  $("key").addEventListener("keydown", (e) => { if (e.key === "Enter") $("key-go").click(); });
  $("filter-clear").addEventListener("click", () => { state.filter = null; state.start = 0; showFilter(); showSamples(); });
  $("search-go").addEventListener("click", runSearch);
  $("search-q").addEventListener("keydown", (e) => { if (e.key === "Enter") runSearch(); });
  $("search-stop").addEventListener("click", () => { state.searching += 1; $("search-stop").disabled = true; $("search-info").textContent += " stopped"; });
  $("step-go").addEventListener("click", showStep);
  $("lightbox").addEventListener("click", () => { $("lightbox").hidden = true; });
  pick();
}

document.addEventListener("DOMContentLoaded", start);
