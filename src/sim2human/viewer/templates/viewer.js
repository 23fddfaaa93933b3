// The run viewer: filters, paging and transcripts over the embedded episodes.
// Every string from the run goes into the page through textContent, never innerHTML.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("viewer-data").textContent);
  const S = DATA.strings;
  const E = DATA.episodes;
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

  function distinct(key) {
    const seen = new Set();
    for (const e of E) seen.add(S[e[key]]);
    return Array.from(seen).sort();
  }

  function outcomeOf(e, outcome) {
    if (outcome === "failures") return !e.ok;
    if (outcome === "exploits") return e.x === 1;
    if (outcome === "successes") return e.ok === 1;
    return true;
  }

  function matches(e) {
    if (state.condition && S[e.c] !== state.condition) return false;
    if (state.family && S[e.f] !== state.family) return false;
    if (state.split && S[e.s] !== state.split) return false;
    if (state.search) {
      const q = state.search.toLowerCase();
      if (!e.id.toLowerCase().includes(q) && !S[e.m].toLowerCase().includes(q)) return false;
    }
    return true;
  }

  function itemMatches(i) {
    if (!PAIRS) return matches(E[i]) && outcomeOf(E[i], state.outcome);
    const [a, b] = PAIRS[i];
    return (matches(E[a]) || matches(E[b])) &&
      (outcomeOf(E[a], state.outcome) || outcomeOf(E[b], state.outcome));
  }

  function refilter() {
    const total = PAIRS ? PAIRS.length : E.length;
    shown = [];
    for (let i = 0; i < total; i++) if (itemMatches(i)) shown.push(i);
    state.page = 0;
    draw();
  }

  function pct(x) { return Math.round(100 * x); }

  function graderText(e) {
    const wrong = e.why.filter((w) => !w[1]).map((w) => S[w[0]]);
    if (e.ok) return "success";
    if (!wrong.length) return "not achieved";
    const names = wrong.length > 2 ? wrong.slice(0, 2).join(", ") + ", +" + (wrong.length - 2)
      : wrong.join(", ");
    return wrong.length + "/" + e.why.length + " wrong: " + names;
  }

  function cells(tr, e, withMeta) {
    const values = withMeta ? [S[e.c], S[e.r], S[e.m], S[e.f], S[e.s]] : [];
    for (const v of values) tr.appendChild(el("td", "", v));
    tr.appendChild(el("td", "num", pct(e.p)));
    tr.appendChild(el("td", "num " + (e.ok ? "okay" : "fail"), pct(e.g)));
    tr.appendChild(el("td", "", S[e.t]));
    tr.appendChild(el("td", "num", e.n));
    tr.appendChild(el("td", e.x ? "exploit" : (e.ok ? "okay" : "fail"),
      (e.x ? "exploit; " : "") + graderText(e)));
  }

  function row(i) {
    const tr = el("tr");
    tr.dataset.index = String(i);
    if (i === state.open) tr.className = "open";
    if (PAIRS) {
      const [a, b] = PAIRS[i];
      for (const v of [S[E[a].m], S[E[a].f], S[E[a].s]]) tr.appendChild(el("td", "", v));
      cells(tr, E[a], false);
      cells(tr, E[b], false);
    } else {
      cells(tr, E[i], true);
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
    $("count").textContent = shown.length + " of " + (PAIRS ? PAIRS.length : E.length) +
      (PAIRS ? " differing pairs" : " episodes") +
      (shown.length ? " (showing " + (start + 1) + "–" + (start + slice.length) + ")" : "");
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
  }

  function facts(e) {
    const dl = el("dl");
    const add = (k, v) => { dl.appendChild(el("dt", "", k)); dl.appendChild(el("dd", "", v)); };
    add("condition / run", S[e.c] + " / " + S[e.r]);
    add("member", S[e.m] + " (" + S[e.f] + ", " + S[e.k] + ", " + S[e.s] + ")");
    add("proxy", pct(e.p) + (e.x ? "  (exploit: pleased, task not done)" : ""));
    add("gold", pct(e.g) + (e.ok ? " (success)" : " (not achieved)"));
    if (e.d.length) add("gold detail", e.d.map((d) => S[d[0]] + " " + d[1]).join(", "));
    add("ended", S[e.t] + " after " + e.n + " agent turns");
    if (e.err) add("error", e.err);
    return dl;
  }

  function reasons(e) {
    const table = el("table", "reasons");
    const head = el("tr");
    for (const h of ["field", "grader", "expected", "recorded"]) head.appendChild(el("th", "", h));
    table.appendChild(head);
    for (const [f, right, expected, recorded] of e.why) {
      const tr = el("tr");
      tr.appendChild(el("td", "", S[f]));
      tr.appendChild(el("td", right ? "okay" : "fail", right ? "right" : "wrong"));
      tr.appendChild(el("td", "", S[expected]));
      tr.appendChild(el("td", "", S[recorded]));
      table.appendChild(tr);
    }
    return table;
  }

  function turns(e) {
    const box = el("div", "turns");
    const flagged = new Set(e.h);
    e.tu.forEach((t, i) => {
      const [agent, text, act, tags, tools] = t;
      const div = el("div", "turn " + (agent ? "agent" : "user") + (flagged.has(i) ? " flagged" : ""));
      let who = agent ? "agent" : "user";
      if (act >= 0) who += " · " + S[act];
      if (tags >= 0) who += " · " + S[tags];
      div.appendChild(el("span", "who", who));
      if (flagged.has(i)) div.appendChild(el("span", "flag", "flagged by the exploit finder: "));
      div.appendChild(el("span", "text", S[text]));
      if (tools >= 0) div.appendChild(el("span", "tools", "tools: " + S[tools]));
      box.appendChild(div);
    });
    return box;
  }

  function episodeView(e, label) {
    const box = el("div", "episode");
    box.appendChild(el("h3", "", (label ? label + ": " : "") + e.id));
    box.appendChild(facts(e));
    if (e.why.length) box.appendChild(reasons(e));
    box.appendChild(turns(e));
    return box;
  }

  function open(i) {
    state.open = i;
    const pane = $("transcript");
    if (PAIRS) {
      const pair = el("div", "pair");
      pair.appendChild(episodeView(E[PAIRS[i][0]], LABELS[0]));
      pair.appendChild(episodeView(E[PAIRS[i][1]], LABELS[1]));
      pane.replaceChildren(pair);
    } else {
      pane.replaceChildren(episodeView(E[i], ""));
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
})();
