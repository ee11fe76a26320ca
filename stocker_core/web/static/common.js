/* Shared helpers of every view: the API client (with the optional API key), DOM building,
   number formatting, notices and tables. Plain JavaScript, no dependencies. */
"use strict";

const KEY_STORE = "stocker.apiKey";

function askKey() {
  const dialog = document.getElementById("key-dialog");
  const input = document.getElementById("key-input");
  return new Promise((resolve) => {
    if (!dialog || typeof dialog.showModal !== "function") {
      resolve(window.prompt("API key of this server") || null);
      return;
    }
    input.value = "";
    dialog.addEventListener("close", function done() {
      dialog.removeEventListener("close", done);
      resolve(dialog.returnValue === "ok" && input.value ? input.value : null);
    });
    dialog.showModal();
    input.focus();
  });
}

async function authorizedFetch(path, options = {}, retried = false) {
  const headers = Object.assign({}, options.headers || {});
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) headers.Authorization = "Bearer " + key;
  const response = await fetch(path, Object.assign({}, options, { headers }));
  if (response.status === 401 && !retried) {
    const entered = await askKey();
    if (entered) {
      sessionStorage.setItem(KEY_STORE, entered);
      return authorizedFetch(path, options, true);
    }
  }
  return response;
}

/* JSON from the API; throws an Error carrying the server's message on a 4xx/5xx. */
async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await authorizedFetch(path, options);
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    let message = data && (data.error || data.detail);
    if (typeof message !== "string") message = JSON.stringify(message || response.statusText);
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return data;
}

/* An object URL for a protected file (chart PNG, report), so <img> and links work with a key. */
async function blobUrl(path) {
  const response = await authorizedFetch(path);
  if (!response.ok) throw new Error("could not load " + path + " (" + response.status + ")");
  return URL.createObjectURL(await response.blob());
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function fmt(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString("en-US");
  return Number(value.toPrecision(digits)).toString();
}

function money(value) {
  if (value === null || value === undefined) return "–";
  return value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/* A signed number with an arrow, so direction never rests on colour alone. */
function signed(value, digits = 4) {
  if (value === null || value === undefined) return "–";
  const arrow = value > 0 ? "▲ +" : value < 0 ? "▼ " : "• ";
  return arrow + fmt(value, digits);
}

function notice(message, kind = "info") {
  const box = document.getElementById("notice");
  if (!box) return;
  box.replaceChildren(message ? el("p", { class: "notice " + kind }, message) : "");
}

function showError(error) {
  notice(error.message || String(error), "error");
}

/* A later action succeeded: the error banner of an earlier one goes (an info notice stays). */
function clearError() {
  const box = document.getElementById("notice");
  if (box && box.querySelector(".notice.error")) box.replaceChildren();
}

/* Fill a <table> from column specs {key, label, format?, className?} and row objects. */
function fillTable(table, columns, rows, caption) {
  const head = el("thead", {}, el("tr", {}, columns.map((c) => el("th", { scope: "col", title: c.help || null, class: c.className || null }, c.label))));
  const body = el("tbody", {}, rows.map((row) => el("tr", { class: row._class || null },
    columns.map((c) => {
      const value = c.format ? c.format(row[c.key], row) : fmt(row[c.key]);
      return el("td", { class: c.className || null }, value);
    }))));
  table.replaceChildren(...(caption ? [el("caption", {}, caption)] : []), head, body);
}

function query() { return new URLSearchParams(window.location.search); }

function setQuery(values) {
  const params = query();
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined || v === "") params.delete(k); else params.set(k, v);
  }
  window.history.replaceState(null, "", "?" + params.toString());
}

/* Fill the episode picker (tasks, then stored episodes) and return the chosen name. */
async function fillEpisodePicker(select, keyInput, wanted) {
  const choices = await api("api/choices");
  const groups = [
    el("optgroup", { label: "Tasks" }, choices.tasks.map((t) =>
      el("option", { value: t.task_id }, `${t.task_id} — ${t.key} (${t.regime})`))),
  ];
  if (choices.episodes.length) {
    groups.push(el("optgroup", { label: "Stored episodes" }, choices.episodes.map((e) =>
      el("option", { value: e.key }, `${e.key} · ${e.trading_days} days`))));
  }
  select.replaceChildren(...groups);
  if (keyInput && choices.example_key) keyInput.placeholder = choices.example_key;  // a key of this home's data
  const known = [...select.options].some((o) => o.value === wanted);
  if (wanted && known) select.value = wanted;
  else if (wanted && keyInput) keyInput.value = wanted;
  else if (choices.episodes.length) select.value = choices.episodes[0].key;
  return choices;
}

function pickedEpisode(select, keyInput) {
  const typed = keyInput && keyInput.value.trim();
  return typed || select.value;
}
