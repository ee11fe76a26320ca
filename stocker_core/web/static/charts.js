/* Small inline-SVG charts: lines with end labels, candlesticks with trade markers, a heat map.
   Shapes, dashes and text carry meaning as well as colour. */
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function extent(values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (v !== null && v !== undefined && Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!Number.isFinite(lo)) return [0, 1];
  if (lo === hi) { lo -= 1; hi += 1; }
  const pad = (hi - lo) * 0.06;
  return [lo - pad, hi + pad];
}

function frame(width, height, label) {
  return svgEl("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label, class: "svg-chart" });
}

/* Tick values at a round step (1, 2 or 5 × 10^k) inside [lo, hi], about `count` of them. */
function niceTicks(lo, hi, count = 5) {
  const span = hi - lo;
  if (!(span > 0) || !Number.isFinite(span)) return { values: [lo], step: 1 };
  const raw = span / count, magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
  const norm = raw / magnitude;
  const step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  const values = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) values.push(k * step);
  return { values, step };
}

/* Decimals that tell ticks `step` apart (0.002 -> 3, 0.5 -> 1, 20 -> 0). */
function stepDecimals(step) {
  return Math.max(0, Math.min(8, -Math.floor(Math.log10(step) + 1e-9)));
}

/* A y tick: its value with as many decimals as the tick step needs (in k or M when the step is
   that big, the same unit on every tick), so neighbouring ticks never read the same. */
function tickNumber(v, step) {
  if (Math.abs(v) < step * 1e-6) v = 0;
  if (step >= 1e5) return (v / 1e6).toFixed(stepDecimals(step / 1e6)) + "M";
  if (step >= 1e3) return (v / 1e3).toFixed(stepDecimals(step / 1e3)) + "k";
  const digits = stepDecimals(step);
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/* A y tick as the change from `base` in percent (equity from 1.0: 1.0025 -> "+0.25%"). */
function tickPercentFrom(base) {
  return (v, step) => {
    let change = (v / base - 1) * 100;
    const pctStep = (step / Math.abs(base)) * 100;
    if (Math.abs(change) < pctStep * 1e-6) change = 0;
    return (change > 0 ? "+" : change < 0 ? "−" : "") + Math.abs(change).toFixed(stepDecimals(pctStep)) + "%";
  };
}

/* Axes: y ticks at round values on the left (labelled by yFormat(value, step)), a few date labels
   along the bottom. */
function axes(svg, box, yRange, xLabels, yFormat) {
  const [lo, hi] = yRange;
  const ticks = niceTicks(lo, hi, 5);
  for (const v of ticks.values) {
    const y = box.y + box.h - (box.h * (v - lo)) / (hi - lo);
    svg.append(svgEl("line", { x1: box.x, x2: box.x + box.w, y1: y, y2: y, class: "grid" }));
    svg.append(svgEl("text", { x: box.x - 6, y: y + 4, class: "tick", "text-anchor": "end" }, document.createTextNode(yFormat(v, ticks.step))));
  }
  const n = xLabels.length;
  const every = Math.max(1, Math.ceil(n / 6));
  for (let i = 0; i < n; i += every) {
    const x = box.x + (n === 1 ? box.w / 2 : (box.w * i) / (n - 1));
    svg.append(svgEl("text", { x, y: box.y + box.h + 16, class: "tick", "text-anchor": "middle" }, document.createTextNode(xLabels[i])));
  }
}

/* series: [{name, values, style: "solid"|"dashed"|"dotted", cls}], xLabels: text per index. */
function lineChart(container, series, xLabels, options = {}) {
  const width = options.width || 640, height = options.height || 260;
  const box = { x: 56, y: 12, w: width - 56 - (options.rightPad || 110), h: height - 40 };
  const all = series.flatMap((s) => s.values);
  const yRange = extent(all);
  const n = Math.max(1, ...series.map((s) => s.values.length)) ;
  const total = Math.max(n, xLabels.length);
  const xAt = (i) => box.x + (total <= 1 ? box.w / 2 : (box.w * i) / (total - 1));
  const yAt = (v) => box.y + box.h - ((v - yRange[0]) / (yRange[1] - yRange[0])) * box.h;
  const svg = frame(width, height, options.label || "line chart");
  axes(svg, box, yRange, xLabels, options.yFormat || tickNumber);
  const dashes = { solid: null, dashed: "6 4", dotted: "2 3" };
  const labelled = [];
  series.forEach((s, k) => {
    const points = s.values.map((v, i) => (v === null || v === undefined ? null : `${xAt(i).toFixed(1)},${yAt(v).toFixed(1)}`)).filter(Boolean);
    if (!points.length) return;
    svg.append(svgEl("polyline", { points: points.join(" "), class: "line " + (s.cls || `c${k % 8}`), "stroke-dasharray": dashes[s.style || "solid"] }));
    const last = s.values.map((v, i) => [v, i]).filter(([v]) => v !== null && v !== undefined).pop();
    if (last) {
      let y = yAt(last[0]) + 4;
      while (labelled.some((used) => Math.abs(used - y) < 12)) y += 12;  // keep end labels apart
      labelled.push(y);
      svg.append(svgEl("text", { x: xAt(last[1]) + 6, y, class: "end-label " + (s.cls || `c${k % 8}`) }, document.createTextNode(s.name)));
    }
  });
  if (options.cursor !== undefined && options.cursor !== null) {
    svg.append(svgEl("line", { x1: xAt(options.cursor), x2: xAt(options.cursor), y1: box.y, y2: box.y + box.h, class: "cursor" }));
    const at = series.length ? series[0].values[options.cursor] : null;
    if (options.cursorLabel && at !== null && at !== undefined) {  // a marked point of the first series, e.g. the kept step
      svg.append(svgEl("circle", { cx: xAt(options.cursor), cy: yAt(at), r: 5, class: "kept" }));
      svg.append(svgEl("text", { x: xAt(options.cursor) + 6, y: box.y + 12, class: "cursor-label" }, document.createTextNode(options.cursorLabel)));
    }
  }
  container.replaceChildren(svg);
  return svg;
}

/* bars: {date, open, high, low, close}; trades: [{i, side}]; band: bool per day; cursor: index. */
function candleChart(container, bars, options = {}) {
  const width = options.width || 640, height = options.height || 260;
  const box = { x: 56, y: 12, w: width - 72, h: height - 40 };
  const n = bars.close.length;
  const yRange = extent(bars.low.concat(bars.high));
  const step = box.w / Math.max(n, 1);
  const xAt = (i) => box.x + step * (i + 0.5);
  const yAt = (v) => box.y + box.h - ((v - yRange[0]) / (yRange[1] - yRange[0])) * box.h;
  const svg = frame(width, height, options.label || "candlestick chart");
  (options.band || []).forEach((long, i) => {
    if (long) svg.append(svgEl("rect", { x: box.x + step * i, y: box.y + box.h - 6, width: step, height: 6, class: "band" }));
  });
  axes(svg, box, yRange, bars.date.map((d) => d.slice(5)), tickNumber);
  const body = Math.max(1.5, step * 0.6);
  for (let i = 0; i < n; i++) {
    const up = bars.close[i] >= bars.open[i];
    const top = yAt(Math.max(bars.open[i], bars.close[i])), bottom = yAt(Math.min(bars.open[i], bars.close[i]));
    const cls = up ? "candle up" : "candle down";
    const g = svgEl("g", { class: cls });
    g.append(svgEl("title", {}, document.createTextNode(`${bars.date[i]} O ${bars.open[i].toFixed(2)} H ${bars.high[i].toFixed(2)} L ${bars.low[i].toFixed(2)} C ${bars.close[i].toFixed(2)} (${up ? "up" : "down"})`)));
    g.append(svgEl("line", { x1: xAt(i), x2: xAt(i), y1: yAt(bars.high[i]), y2: yAt(bars.low[i]) }));
    g.append(svgEl("rect", { x: xAt(i) - body / 2, y: top, width: body, height: Math.max(1, bottom - top) }));
    svg.append(g);
  }
  for (const t of options.trades || []) {
    const x = xAt(t.i);
    if (t.side === "buy") {
      const y = yAt(bars.low[t.i]) + 6;
      svg.append(svgEl("path", { d: `M${x},${y} l-6,10 h12 z`, class: "mark buy" }, svgEl("title", {}, document.createTextNode(`buy ${t.qty} on ${bars.date[t.i]}`))));
      svg.append(svgEl("text", { x, y: y + 21, class: "mark-label", "text-anchor": "middle" }, document.createTextNode("B")));
    } else if (t.side === "sell") {
      const y = yAt(bars.high[t.i]) - 6;
      svg.append(svgEl("path", { d: `M${x},${y} l-6,-10 h12 z`, class: "mark sell" }, svgEl("title", {}, document.createTextNode(`sell ${t.qty} on ${bars.date[t.i]}`))));
      svg.append(svgEl("text", { x, y: y - 13, class: "mark-label", "text-anchor": "middle" }, document.createTextNode("S")));
    }
  }
  if (options.cursor !== undefined && options.cursor !== null && options.cursor < n) {
    svg.append(svgEl("rect", { x: box.x + step * options.cursor, y: box.y, width: step, height: box.h, class: "cursor-band" }));
  }
  container.replaceChildren(svg);
  return svg;
}

/* rows × cols of signals in [-1, 1] (null: none) with confidence as opacity; onPick(col). */
function heatMap(container, rows, cols, signal, confidence, options = {}) {
  const cell = options.cell || 16, left = 118, top = 8;
  const width = left + cols.length * cell + 8, height = top + rows.length * cell + 30;
  const svg = frame(width, height, options.label || "heat map");
  rows.forEach((row, r) => {
    svg.append(svgEl("text", { x: left - 6, y: top + r * cell + cell * 0.7, class: "tick", "text-anchor": "end" }, document.createTextNode(row)));
    cols.forEach((col, c) => {
      const s = signal[row][c], conf = confidence[row][c];
      const x = left + c * cell, y = top + r * cell;
      const cls = s === null ? "cell none" : s > 0.05 ? "cell pos" : s < -0.05 ? "cell neg" : "cell zero";
      const g = svgEl("g", { class: "pick", "data-col": c });
      const opacity = s === null ? 1 : (0.25 + 0.75 * Math.min(1, Math.abs(s))) * (0.4 + 0.6 * (conf || 0));
      g.append(svgEl("rect", { x, y, width: cell - 1, height: cell - 1, class: cls, "fill-opacity": opacity.toFixed(2) }));
      const mark = s === null ? "" : s > 0.05 ? "+" : s < -0.05 ? "−" : "·";
      const markClass = s !== null && Math.abs(s) <= 0.05 ? "cell-mark dark" : "cell-mark";
      g.append(svgEl("text", { x: x + cell / 2 - 0.5, y: y + cell * 0.72, class: markClass, "text-anchor": "middle" }, document.createTextNode(mark)));
      g.append(svgEl("title", {}, document.createTextNode(s === null ? `${row} ${col}: no vote` : `${row} ${col}: signal ${s.toFixed(2)}, confidence ${conf.toFixed(2)}`)));
      svg.append(g);
    });
  });
  const every = Math.max(1, Math.ceil(cols.length / 8));
  for (let c = 0; c < cols.length; c += every) {
    svg.append(svgEl("text", { x: left + c * cell + cell / 2, y: top + rows.length * cell + 16, class: "tick", "text-anchor": "middle" }, document.createTextNode(cols[c].slice(5))));
  }
  if (options.selected !== undefined && options.selected !== null) {
    svg.append(svgEl("rect", { x: left + options.selected * cell - 1, y: top - 2, width: cell + 1, height: rows.length * cell + 3, class: "selected-col" }));
  }
  if (options.onPick) {
    svg.addEventListener("click", (event) => {
      const g = event.target.closest("g.pick");
      if (g) options.onPick(Number(g.getAttribute("data-col")));
    });
  }
  container.replaceChildren(svg);
  return svg;
}
