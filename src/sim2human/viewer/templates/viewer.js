// The run viewer: filters, paging and transcripts over the embedded episodes.
// Every string from the run goes into the page through textContent, never innerHTML.
// The index (#viewer-data: columns of numbers and string indices) is read at load; an
// episode's details (reasons, turns) sit in the blocks after this script (#viewer-block-K,
// BLOCK episodes each, with their own string table), decoded when one of them is opened.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("viewer-data").textContent);
  const S = DATA.strings;
  const C = DATA.cols;
  const IDS = DATA.ids;
  const N = IDS.length;
  const BLOCK = DATA.block;  // episodes a block (viewer.data.CHUNK)
  const blocks = new Map();  // block number -> its parsed JSON
  const PAIRS = DATA.pairs || null; // compare pages: [index in A, index in B]
  const LABELS = DATA.labels || [];
  const init = DATA.initial || {};
  const state = {
    condition: init.condition || "", family: init.family || "", split: init.split || "",
    outcome: init.outcome || "", search: "", page: 0, size: 50, open: -1,
  };
  let shown = [];
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fillSelect(id, values, current) {
    const select = $(id);
    select.replaceChildren(el("option", "", "all"));
    select.firstChild.value = "";
    for (const v of values) {
      const option = el("option", "", v);
      option.value = v;
      select.appendChild(option);
    }
    select.value = values.includes(current) ? current : "";
  }

  // Episode i as the list and the filters read it (the index only).
  function ep(i) {
    return {
      i: i, id: IDS[i], c: S[C.c[i]], r: S[C.r[i]], m: S[C.m[i]], f: S[C.f[i]], k: S[C.k[i]],
      s: S[C.s[i]], t: S[C.t[i]], w: S[C.w[i]], p: C.p[i], g: C.g[i], ok: C.ok[i], x: C.x[i],
      n: C.n[i],
    };
  }

  // Episode i's details, decoded from its block (null while the browser is still reading it).
  function details(i) {
    const k = Math.floor(i / BLOCK);
    if (!blocks.has(k)) {
      const node = document.getElementById("viewer-block-" + k);
      if (!node) return null;
      blocks.set(k, JSON.parse(node.textContent));
    }
    const b = blocks.get(k);
    const [why, d, err, tu, h] = b.rows[i % BLOCK];
    const T = b.strings;
    return {
      why: why.map(([f, right, exp, rec]) => [T[f], right, T[exp], T[rec]]),
      d: d.map(([name, v]) => [T[name], v]), err: err, h: h,
      tu: tu.map(([agent, text, act, tags, tools]) => [agent, T[text], act >= 0 ? T[act] : null,
        tags >= 0 ? T[tags] : null, tools >= 0 ? T[tools] : null]),
    };
  }

  function distinct(key) {
    const seen = new Set(C[key]);
    return Array.from(seen, (j) => S[j]).sort();
  }

  function outcomeOf(i, outcome) {
    if (outcome === "failures") return !C.ok[i];
    if (outcome === "exploits") return C.x[i] === 1;
    if (outcome === "successes") return C.ok[i] === 1;
    return true;
  }

  // The filters as the index holds them: a chosen value becomes its string index (-2: a
  // value no episode has), the search a set of the members that match it.
  function compiled() {
    const at = (v) => (v ? S.indexOf(v) === -1 ? -2 : S.indexOf(v) : -1);
    const q = state.search.toLowerCase();
    const members = new Set();
    if (q) for (const j of new Set(C.m)) if (S[j].toLowerCase().includes(q)) members.add(j);
    return { c: at(state.condition), f: at(state.family), s: at(state.split), q, members };
  }

  function matches(i, w) {
    if (w.c !== -1 && C.c[i] !== w.c) return false;
    if (w.f !== -1 && C.f[i] !== w.f) return false;
    if (w.s !== -1 && C.s[i] !== w.s) return false;
    if (w.q && !w.members.has(C.m[i]) && !IDS[i].toLowerCase().includes(w.q)) return false;
    return true;
  }

  function itemMatches(i, w) {
    if (!PAIRS) return matches(i, w) && outcomeOf(i, state.outcome);
    const [a, b] = PAIRS[i];
    return (matches(a, w) || matches(b, w)) &&
      (outcomeOf(a, state.outcome) || outcomeOf(b, state.outcome));
  }

  function refilter() {
    const total = PAIRS ? PAIRS.length : N;
    const w = compiled();
    shown = [];
    for (let i = 0; i < total; i++) if (itemMatches(i, w)) shown.push(i);
    state.page = 0;
    draw();
  }

  function pct(x) { return Math.round(100 * x); }

  function cells(tr, e, withMeta) {
    const values = withMeta ? [e.c, e.r, e.m, e.f, e.s] : [];
    for (const v of values) tr.appendChild(el("td", "", v));
    tr.appendChild(el("td", "num", pct(e.p)));
    tr.appendChild(el("td", "num " + (e.ok ? "okay" : "fail"), pct(e.g)));
    tr.appendChild(el("td", "", e.t));
    tr.appendChild(el("td", "num", e.n));
    tr.appendChild(el("td", e.x ? "exploit" : (e.ok ? "okay" : "fail"),
      (e.x ? "exploit; " : "") + e.w));
  }

  function row(i) {
    const tr = el("tr");
    tr.dataset.index = String(i);
    if (i === state.open) tr.className = "open";
    if (PAIRS) {
      const [a, b] = PAIRS[i].map(ep);
      for (const v of [a.m, a.f, a.s]) tr.appendChild(el("td", "", v));
      cells(tr, a, false);
      cells(tr, b, false);
    } else {
      cells(tr, ep(i), true);
    }
    tr.addEventListener("click", () => open(i));
    return tr;
  }

  function draw() {
    const pages = Math.max(1, Math.ceil(shown.length / state.size));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * state.size;
    const slice = shown.slice(start, start + state.size);
    document.querySelector("#rows tbody").replaceChildren(...slice.map(row));
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("count").textContent = shown.length + " of " + (PAIRS ? PAIRS.length : N) +
      (PAIRS ? " differing pairs" : " episodes") +
      (shown.length ? " (showing " + (start + 1) + "–" + (start + slice.length) + ")" : "");
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
  }

  function facts(e, more) {
    const dl = el("dl");
    const add = (k, v) => { dl.appendChild(el("dt", "", k)); dl.appendChild(el("dd", "", v)); };
    add("condition / run", e.c + " / " + e.r);
    add("member", e.m + " (" + e.f + ", " + e.k + ", " + e.s + ")");
    add("proxy", pct(e.p) + (e.x ? "  (exploit: pleased, task not done)" : ""));
    add("gold", pct(e.g) + (e.ok ? " (success)" : " (not achieved)"));
    if (more.d.length) add("gold detail", more.d.map((d) => d[0] + " " + d[1]).join(", "));
    add("ended", e.t + " after " + e.n + " agent turns");
    if (more.err) add("error", more.err);
    return dl;
  }

  function reasons(more) {
    const table = el("table", "reasons");
    const head = el("tr");
    for (const h of ["field", "grader", "expected", "recorded"]) head.appendChild(el("th", "", h));
    table.appendChild(head);
    for (const [f, right, expected, recorded] of more.why) {
      const tr = el("tr");
      tr.appendChild(el("td", "", f));
      tr.appendChild(el("td", right ? "okay" : "fail", right ? "right" : "wrong"));
      tr.appendChild(el("td", "", expected));
      tr.appendChild(el("td", "", recorded));
      table.appendChild(tr);
    }
    return table;
  }

  function turns(more) {
    const box = el("div", "turns");
    const flagged = new Set(more.h);
    more.tu.forEach((t, i) => {
      const [agent, text, act, tags, tools] = t;
      const div = el("div", "turn " + (agent ? "agent" : "user") + (flagged.has(i) ? " flagged" : ""));
      let who = agent ? "agent" : "user";
      if (act !== null) who += " · " + act;
      if (tags !== null) who += " · " + tags;
      div.appendChild(el("span", "who", who));
      if (flagged.has(i)) div.appendChild(el("span", "flag", "flagged by the exploit finder: "));
      div.appendChild(el("span", "text", text));
      if (tools !== null && tools !== undefined) div.appendChild(el("span", "tools", "tools: " + tools));
      box.appendChild(div);
    });
    return box;
  }

  function episodeView(i, label) {
    const e = ep(i);
    const more = details(i);
    const box = el("div", "episode");
    box.appendChild(el("h3", "", (label ? label + ": " : "") + e.id));
    if (more === null) {
      box.appendChild(el("p", "muted", "still reading this part of the page…"));
      return box;
    }
    box.appendChild(facts(e, more));
    if (more.why.length) box.appendChild(reasons(more));
    box.appendChild(turns(more));
    return box;
  }

  function open(i) {
    state.open = i;
    const pane = $("transcript");
    if (PAIRS) {
      const pair = el("div", "pair");
      pair.appendChild(episodeView(PAIRS[i][0], LABELS[0]));
      pair.appendChild(episodeView(PAIRS[i][1], LABELS[1]));
      pane.replaceChildren(pair);
    } else {
      pane.replaceChildren(episodeView(i, ""));
    }
    if (document.readyState === "loading") {  // its block may not be read yet: again when it is
      document.addEventListener("DOMContentLoaded", () => { if (state.open === i) open(i); },
        { once: true });
    }
    draw();
    const flagged = pane.querySelector(".turn.flagged");  // the first flagged turn in view
    pane.scrollTop = flagged ? Math.max(0, flagged.offsetTop - 120) : 0;
  }

  function bind(id, key) {
    $(id).addEventListener(id === "f-search" ? "input" : "change", (ev) => {
      state[key] = ev.target.value;
      refilter();
    });
  }

  fillSelect("f-condition", distinct("c"), state.condition);
  fillSelect("f-family", distinct("f"), state.family);
  fillSelect("f-split", distinct("s"), state.split);
  $("f-outcome").value = state.outcome;  // not what the browser restored from a last visit
  $("f-size").value = String(state.size);
  $("f-search").value = state.search;
  for (const [id, key] of [["f-condition", "condition"], ["f-family", "family"],
    ["f-split", "split"], ["f-outcome", "outcome"], ["f-search", "search"]]) bind(id, key);
  $("f-size").addEventListener("change", (ev) => {
    state.size = Number(ev.target.value);
    state.page = 0;
    draw();
  });
  $("prev").addEventListener("click", () => { state.page -= 1; draw(); });
  $("next").addEventListener("click", () => { state.page += 1; draw(); });
  window.viewer = { state, shown: () => shown.slice(), open, refilter };
  refilter();
  performance.mark("viewer-first-rows");  // what bench_viewer.py --browser reads
})();
