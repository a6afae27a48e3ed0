// hwnoise labelling page: draws each node's label over the stored page (in a sandboxed,
// script-less iframe of the same origin) and saves every flip at once through the JSON API.
"use strict";
const TOKEN = document.body.dataset.token;
const withT = (p) => p + (p.includes("?") ? "&" : "?") + "t=" + encodeURIComponent(TOKEN);
const $ = (id) => document.getElementById(id);
const COLOURS = { N: [26, 152, 80], S: [215, 48, 39] };
let pages = [], cur = 0, nodes = [], sel = -1, suggestion = null;

async function api(path, body) {
  const opts = { headers: { "X-Hwnoise-Token": TOKEN } };
  if (body !== undefined) {
    opts.method = "POST";
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(withT(path), opts);
  if (!r.ok) throw new Error(path + ": " + r.status);
  return r.json();
}

function doc() { return $("frame").contentDocument; }
function el(node) { return doc() && doc().querySelector('[data-hw-node="' + node + '"]'); }

function paintNode(n) {
  const e = el(n.node);
  if (!e) return;
  e.setAttribute("data-hw-label", n.label || "");
  if (!n.label) { e.style.outline = ""; e.style.backgroundColor = ""; return; }
  const [r, g, b] = COLOURS[n.label];
  const a = n.set_by === "person" ? 1 : Math.max(0.15, (n.confidence - 0.5) * 2);
  e.style.outline = "2px " + (n.set_by === "person" ? "solid" : "dashed") + " rgba(" + r + "," + g + "," + b + "," + a + ")";
  e.style.outlineOffset = "-2px";
  e.style.backgroundColor = "rgba(" + r + "," + g + "," + b + "," + (0.10 * a) + ")";
  e.title = n.label + " " + (n.set_by || "") + " " + (n.confidence == null ? "" : n.confidence.toFixed(2));
  if (n.node === sel) e.style.boxShadow = "0 0 0 3px #2166ac inset";
  else e.style.boxShadow = "";
}

function paint() { nodes.forEach(paintNode); }

function showNode() {
  const n = nodes[sel];
  $("node").textContent = n ? (n.xpath + "\n" + (n.label || "unlabelled") + " · " + (n.set_by || "–") +
    " · confidence " + (n.confidence == null ? "–" : n.confidence.toFixed(2))) : "no node selected";
}

async function refreshStatus() {
  const d = await api("/api/pages");
  pages = d.pages;
  $("dataset").textContent = d.dataset;
  const m = d.model;
  suggestion = m.next;
  $("model").textContent = m.checked + " checked · " + (m.cv_f1 == null ? "CV needs 2 checked pages" :
    "per-site model, CV by page: content F1 " + m.cv_f1.toFixed(3) + ", accuracy " + m.cv_accuracy.toFixed(3)) +
    (m.next ? " · least sure: page " + (pages.findIndex((p) => p.id === m.next) + 1) : "");
  const p = pages[cur];
  if (p) {
    $("pageinfo").textContent = "page " + (cur + 1) + "/" + pages.length + (p.gold ? " (has gold: gold wins)" : "");
    $("checked").checked = p.checked;
  }
}

async function show(i) {
  if (!pages.length) return;
  cur = (i + pages.length) % pages.length;
  sel = -1;
  const pid = pages[cur].id;
  const loaded = new Promise((res) => { $("frame").onload = () => { guard(doc()); res(); }; });
  $("frame").src = withT("/frame/" + pid);
  const [d] = await Promise.all([api("/api/labels/" + pid), loaded]);
  nodes = d.nodes;
  const fd = doc();
  fd.addEventListener("click", onClick, true);
  fd.addEventListener("keydown", onKey);
  paint();
  showNode();
  await refreshStatus();
  document.body.setAttribute("data-page", pid);
}

// the stored page's links and forms go nowhere, from the moment it is shown: not by a click,
// a middle click (a new tab, which the sandbox lets through), nor a submit
function guard(fd) {
  if (!fd) return;
  ["click", "auxclick", "submit"].forEach((t) => fd.addEventListener(t, (e) => e.preventDefault(), true));
}

async function flip(node) {
  const n = nodes[node];
  if (!n) return;
  const label = n.label === "N" ? "S" : "N";
  const d = await api("/api/label", { page: pages[cur].id, node: node, label: label, subtree: true });
  d.nodes.forEach((k) => { Object.assign(nodes[k], { label: label, set_by: "person", confidence: 1 }); paintNode(nodes[k]); });
  $("saved").textContent = "saved: " + d.nodes.length + " node(s) → " + label;
  showNode();
  refreshStatus();
}

function onClick(e) {
  e.preventDefault();
  e.stopPropagation();
  const t = e.target.closest ? e.target.closest("[data-hw-node]") : null;
  if (!t) return;
  const old = sel;
  sel = +t.getAttribute("data-hw-node");
  if (nodes[old]) paintNode(nodes[old]);
  flip(sel);
}

function select(k) {
  const old = sel;
  sel = Math.max(0, Math.min(nodes.length - 1, k));
  if (nodes[old]) paintNode(nodes[old]);
  paintNode(nodes[sel]);
  const e = el(sel);
  if (e && e.scrollIntoView) e.scrollIntoView({ block: "center" });
  showNode();
}

async function toggleChecked() {
  const p = pages[cur];
  await api("/api/check", { page: p.id, checked: !p.checked });
  await refreshStatus();
}

function onKey(e) {
  if (e.target && e.target.tagName === "INPUT" && e.target.type !== "checkbox") return;
  const k = e.key;
  if (k === "ArrowRight" || k === "j") show(cur + 1);
  else if (k === "ArrowLeft" || k === "k") show(cur - 1);
  else if (k === "n") select(sel + 1);
  else if (k === "p") select(sel - 1);
  else if (k === " " || k === "Enter") { if (sel >= 0) flip(sel); }
  else if (k === "c") toggleChecked();
  else if (k === "g") { const i = pages.findIndex((p) => p.id === suggestion); if (i >= 0) show(i); }
  else return;
  e.preventDefault();
}

document.addEventListener("keydown", onKey);
$("prev").onclick = () => show(cur - 1);
$("next").onclick = () => show(cur + 1);
$("checked").onchange = (e) => { e.preventDefault(); toggleChecked(); };
$("suggest").onclick = () => { const i = pages.findIndex((p) => p.id === suggestion); if (i >= 0) show(i); };
refreshStatus().then(() => show(0));
