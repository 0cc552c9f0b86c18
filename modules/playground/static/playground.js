// The prompter playground. User text is data: every piece of it reaches the page through
// textContent or a form control's value, never through innerHTML.
"use strict";
(function () {
  const FIELDS = ["prompter", "instruction", "input", "extra_keys", "history", "tools", "model_format", "format"];
  const COMPARE = ["b_model_format", "b_format"];
  const $ = (id) => document.getElementById(id);
  const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
  let generation = 0;
  let timer = null;

  function option(select, value, label) {
    const el = document.createElement("option");
    el.value = value;
    el.textContent = label;
    select.appendChild(el);
  }

  function ensureOption(select, value) {
    if (value && !Array.from(select.options).some((o) => o.value === value)) option(select, value, value);
  }

  // A form control normalises line breaks (a textarea's value has LF for CR and CRLF; a text input drops
  // them), so the values of the link are kept as they came: a field still showing one sends it exactly.
  const linked = {};

  function fieldValue(name) {
    const value = $(name).value;
    const link = linked[name];
    return link !== undefined && value === link.shown ? link.raw : value;
  }

  function state(which) {
    const s = {};
    for (const name of FIELDS) {
      const value = fieldValue(name);
      if (value !== "") s[name] = value;
    }
    if (which === "b") {
      delete s.model_format;
      delete s.format;
      if ($("b_model_format").value) s.model_format = $("b_model_format").value;
      if ($("b_format").value) s.format = $("b_format").value;
    }
    return s;
  }

  function writeUrl() {
    const q = new URLSearchParams(state("a"));
    if ($("compare").checked) {
      q.set("compare", "1");
      for (const name of COMPARE) if ($(name).value) q.set(name, $(name).value);
    }
    const query = q.toString();
    history.replaceState(null, "", query ? "?" + query : location.pathname);
  }

  function readUrl() {
    const q = new URLSearchParams(location.search);
    for (const name of FIELDS.concat(COMPARE)) {
      const value = q.get(name);
      if (value === null) continue;
      const el = $(name);
      if (el.tagName === "SELECT") ensureOption(el, value);
      el.value = value;
      if (FIELDS.includes(name) && el.value !== value) {
        linked[name] = { raw: value, shown: el.value };
      }
    }
    $("compare").checked = q.get("compare") === "1";
  }

  function clearErrors() {
    for (const name of FIELDS) {
      const box = $(name + "-error");
      box.hidden = true;
      box.textContent = "";
      $(name).removeAttribute("aria-invalid");
    }
    for (const name of COMPARE) $(name).removeAttribute("aria-invalid");
  }

  function showSegments(pre, segments) {
    pre.textContent = "";
    for (const seg of segments) {
      const span = document.createElement("span");
      span.className = "seg-" + seg.kind;
      span.textContent = seg.text;
      pre.appendChild(span);
    }
  }

  function countsText(result) {
    let text = result.chars + " characters";
    if (result.tokens !== null && result.tokens !== undefined) text += " · " + result.tokens + " tokens";
    if (!result.marked) text += " · user text not marked (the template transforms it)";
    return text;
  }

  async function post(s) {
    let response;
    try {
      response = await fetch(base + "api/render", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ state: s }),
      });
    } catch (e) {
      return { error: { type: "ConnectionError", field: null, message: "the playground server did not answer: " + e } };
    }
    try {
      return await response.json();
    } catch (e) {
      return { error: { type: "HTTPError", field: null, message: "the server answered " + response.status } };
    }
  }

  function showError(pre, counts, error) {
    const field = FIELDS.includes(error.field) ? error.field : "instruction";
    const box = $(field + "-error");
    box.textContent = error.type + ": " + error.message;
    box.hidden = false;
    $(field).setAttribute("aria-invalid", "true");
    pre.textContent = error.message;
    pre.classList.add("is-error");
    pre.dataset.errorType = error.type;
    pre.dataset.errorField = field;
    counts.textContent = error.type + " in " + field;
  }

  function showResult(pre, counts, result) {
    pre.classList.remove("is-error");
    delete pre.dataset.errorType;
    delete pre.dataset.errorField;
    showSegments(pre, result.segments);
    pre.dataset.kind = result.kind;
    counts.textContent = countsText(result);
  }

  async function renderAll() {
    const mine = ++generation;
    writeUrl();
    const compare = $("compare").checked;
    const [a, b] = await Promise.all([post(state("a")), compare ? post(state("b")) : Promise.resolve(null)]);
    if (mine !== generation) return; // a newer render has started: its answer wins
    clearErrors();
    if (a.error) showError($("output"), $("counts"), a.error);
    else showResult($("output"), $("counts"), a);
    $("pane-b").hidden = !compare;
    $("diff-box").hidden = !compare;
    $("panes").classList.toggle("two", compare);
    if (!compare) return;
    if (b.error) showSecondError(b.error);
    else showResult($("output-b"), $("counts-b"), b);
    if (a.error || b.error) {
      const pre = $("diff");
      pre.textContent = "(no diff: the " + (a.error ? "first" : "second") + " rendering failed; its error is shown above)";
    } else showDiff(a.output, b.output);
  }

  // The second rendering's error, in its pane; a wrong second family or output marks its own picker.
  function showSecondError(error) {
    const pre = $("output-b");
    pre.textContent = error.type + ": " + error.message;
    pre.classList.add("is-error");
    pre.dataset.errorType = error.type;
    const picker = { model_format: "b_model_format", format: "b_format" }[error.field];
    const field = picker || (FIELDS.includes(error.field) ? error.field : "instruction");
    pre.dataset.errorField = field;
    if (picker) $(picker).setAttribute("aria-invalid", "true");
    $("counts-b").textContent = error.type + " in " + field;
  }

  // A line diff (longest common subsequence), bounded so a huge prompt cannot stall the page.
  function showDiff(left, right) {
    const x = left.split("\n");
    const y = right.split("\n");
    const pre = $("diff");
    pre.textContent = "";
    const add = (cls, mark, line) => {
      const span = document.createElement("span");
      span.className = cls;
      span.textContent = mark + line + "\n";
      pre.appendChild(span);
    };
    if (x.length * y.length > 4000000) {
      add("diff-same", "  ", "(too long to diff line by line: " + x.length + " and " + y.length + " lines)");
      return;
    }
    const n = x.length;
    const m = y.length;
    const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        table[i][j] = x[i] === y[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { add("diff-same", "  ", x[i]); i++; j++; }
      else if (j < m && (i === n || table[i][j + 1] >= table[i + 1][j])) { add("diff-add", "+ ", y[j]); j++; }
      else { add("diff-del", "- ", x[i]); i++; }
    }
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(renderAll, 250);
  }

  async function start() {
    try {
      const options = await (await fetch(base + "api/options")).json();
      for (const family of options.families) {
        option($("model_format"), family, family);
        option($("b_model_format"), family, family);
      }
      for (const dialect of options.dialects) {
        if (dialect === "text") continue;
        option($("format"), dialect, dialect + " body");
        option($("b_format"), dialect, dialect + " body");
      }
    } catch (e) {
      // the pickers keep their generic entries; rendering still says what is wrong
    }
    readUrl();
    $("state").addEventListener("submit", (event) => { event.preventDefault(); renderAll(); });
    $("state").addEventListener("input", schedule);
    $("state").addEventListener("change", schedule);
    $("state").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); renderAll(); }
    });
    await renderAll();
    document.body.dataset.ready = "1";
  }

  start();
})();
