// The review page: tabs, case navigation (buttons, list, arrow keys, j / k) and feedback.
// Case and tab fragments are HTML rendered and escaped by the server (or embedded in a static page);
// every other text this script shows is set with textContent.
(function () {
  "use strict";

  const cfg = JSON.parse(document.getElementById("review-config").textContent);
  const dataEl = document.getElementById("review-data");
  const data = dataEl ? JSON.parse(dataEl.textContent) : null;
  const served = cfg.mode === "served";
  const fb = cfg.feedback;
  const texts = fb ? Object.assign({}, fb.texts) : {};
  const marks = fb && fb.marks ? Object.assign({}, fb.marks) : {}; // run id -> its marks on the judge's grades
  let status = fb ? fb.status : null;
  let current = -1;
  let activeTab = null;
  let dirty = false; // static mode: changes not yet downloaded
  const timers = new Map(); // run id -> pending save timer
  const loadedTabs = new Set();

  const $ = (id) => document.getElementById(id);

  function setText(id, text) {
    const el = $(id);
    if (el) el.textContent = text;
  }

  async function getJSON(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(response.status + " " + response.statusText);
    return response.json();
  }

  async function post(url, body, keepalive) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Review-Token": cfg.token },
      body: JSON.stringify(body),
      keepalive: !!keepalive,
    });
    const reply = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(reply.error || response.status + " " + response.statusText);
    return reply;
  }

  // ---- tabs ----------------------------------------------------------------------------------------

  async function showTab(name) {
    if (!cfg.tabs.includes(name)) return;
    activeTab = name;
    document.body.dataset.tab = name;
    for (const tab of document.querySelectorAll(".tab")) {
      const on = tab.dataset.tab === name;
      tab.classList.toggle("active", on);
      tab.setAttribute("aria-selected", on ? "true" : "false");
    }
    for (const panel of document.querySelectorAll(".panel")) {
      panel.classList.toggle("active", panel.id === "panel-" + name);
    }
    if (name === "outputs" || loadedTabs.has(name)) return;
    const panel = $("panel-" + name);
    loadedTabs.add(name);
    panel.textContent = "Loading…";
    try {
      panel.innerHTML = data ? data.tabs[name] : (await getJSON("api/tab/" + encodeURIComponent(name))).html;
    } catch (err) {
      loadedTabs.delete(name);
      panel.textContent = "Could not load this view: " + err.message;
    }
  }

  // ---- pieces loaded when unfolded (a routing run's transcript) -------------------------------------

  async function loadDetail(box) {
    const ref = box.dataset.detail;
    const body = box.querySelector(".lazy-body");
    if (!body || box.dataset.loaded) return;
    box.dataset.loaded = "loading";
    body.textContent = "Loading…";
    try {
      const html = data ? data.details[ref] : (await getJSON("api/detail/" + ref.split("/").map(encodeURIComponent).join("/"))).html;
      if (typeof html !== "string") throw new Error("not in this page");
      body.innerHTML = html;
      box.dataset.loaded = "yes";
    } catch (err) {
      delete box.dataset.loaded;
      body.textContent = "Could not load this: " + err.message;
    }
  }

  // "toggle" does not bubble: listen while it goes down to the element
  document.addEventListener("toggle", (event) => {
    const box = event.target;
    if (box instanceof HTMLDetailsElement && box.open && box.dataset.detail) loadDetail(box);
  }, true);

  // ---- cases ---------------------------------------------------------------------------------------

  async function showCase(index) {
    if (!cfg.cases.length) {
      setText("position", "No cases in this iteration yet.");
      return;
    }
    index = Math.max(0, Math.min(cfg.cases.length - 1, index));
    if (index === current) return;
    flushAll();
    current = index;
    const key = cfg.cases[index];
    const box = $("case");
    setText("position", "Case " + (index + 1) + " of " + cfg.cases.length);
    $("prev").disabled = index === 0;
    $("next").disabled = index === cfg.cases.length - 1;
    for (const link of document.querySelectorAll(".case-link")) {
      const on = Number(link.dataset.index) === index;
      link.classList.toggle("current", on);
      if (on) link.scrollIntoView({ block: "nearest" });
    }
    history.replaceState(null, "", "#case=" + encodeURIComponent(key));
    let html;
    try {
      html = data ? data.cases[key] : (await getJSON("api/case/" + encodeURIComponent(key))).html;
    } catch (err) {
      if (current === index) box.textContent = "Could not load case " + key + ": " + err.message;
      return;
    }
    if (current !== index) return; // the reader moved on while this case loaded
    const moved = box.dataset.case !== undefined;
    box.innerHTML = html;
    if (moved) window.scrollTo(0, 0);
    box.dataset.case = key;
    for (const mark of box.querySelectorAll(".grade-mark")) wireMark(mark);
    for (const area of box.querySelectorAll("textarea[data-run]")) {
      area.value = texts[area.dataset.run] || "";
      area.addEventListener("input", () => changed(area));
      area.addEventListener("blur", () => flush(area.dataset.run));
    }
  }

  // ---- feedback ------------------------------------------------------------------------------------

  function runState(run, text) {
    for (const el of document.querySelectorAll(".fb-state")) {
      if (el.dataset.run === run) el.textContent = text;
    }
  }

  function changed(area) {
    const run = area.dataset.run;
    texts[run] = area.value;
    if (!served) {
      dirty = true;
      runState(run, "(not downloaded yet)");
      setText("save-state", "Changes not downloaded yet");
      return;
    }
    runState(run, "(saving…)");
    clearTimeout(timers.get(run));
    timers.set(run, setTimeout(() => flush(run), 400));
  }

  function flush(run, keepalive) {
    if (!served || !timers.has(run)) return Promise.resolve();
    clearTimeout(timers.get(run));
    timers.delete(run);
    setText("save-state", "Saving…");
    return post("api/feedback", { run_id: run, feedback: texts[run] || "" }, keepalive)
      .then((reply) => {
        runState(run, "(saved)");
        if (reply.status) showStatus(reply.status);
        if (!timers.size) setText("save-state", "All feedback saved to feedback.json");
      })
      .catch((err) => {
        runState(run, "(not saved)");
        setText("save-state", "Not saved: " + err.message);
      });
  }

  // ---- marks on the judge's grades --------------------------------------------------------------------

  function findMark(run, text) {
    return (marks[run] || []).find((m) => m.text === text);
  }

  function showMark(el) {
    const mark = findMark(el.dataset.run, el.dataset.text);
    const right = mark ? mark.right : null;
    el.querySelector(".mark-right").setAttribute("aria-pressed", right === true ? "true" : "false");
    el.querySelector(".mark-wrong").setAttribute("aria-pressed", right === false ? "true" : "false");
    el.querySelector(".mark-state").textContent = mark ? (right ? "(marked right)" : "(marked wrong: the person's grade is " + (mark.passed ? "pass" : "fail") + ")") : "";
  }

  function setMark(el, value) {
    const run = el.dataset.run, text = el.dataset.text, judged = el.dataset.judge === "true";
    const old = findMark(run, text);
    const right = old && old.right === value ? null : value; // pressing it again takes it back
    const version = el.dataset.version ? Number(el.dataset.version) : null;
    const others = (marks[run] || []).filter((m) => m.text !== text);
    const local = () => {
      marks[run] = right === null ? others : others.concat([{ text: text, judge_passed: judged, right: right,
        passed: right ? judged : !judged, grading_version: version, timestamp: new Date().toISOString() }]);
      showMark(el);
    };
    if (!served) {
      local();
      dirty = true;
      setText("save-state", "Changes not downloaded yet");
      return Promise.resolve();
    }
    el.querySelector(".mark-state").textContent = "(saving…)";
    return post("api/grade-mark", { run_id: run, text: text, judge_passed: judged, right: right, grading_version: version })
      .then((reply) => {
        marks[run] = reply.marks || [];
        showMark(el);
        if (reply.status) showStatus(reply.status);
        setText("save-state", "Mark saved to feedback.json");
      })
      .catch((err) => {
        el.querySelector(".mark-state").textContent = "(not saved)";
        setText("save-state", "Not saved: " + err.message);
      });
  }

  function wireMark(el) {
    showMark(el);
    el.querySelector(".mark-right").addEventListener("click", () => setMark(el, true));
    el.querySelector(".mark-wrong").addEventListener("click", () => setMark(el, false));
  }

  function flushAll(keepalive) {
    return Promise.all([...timers.keys()].map((run) => flush(run, keepalive)));
  }

  function showStatus(value) {
    status = value;
    setText("review-status", value === "complete" ? "review complete" : "review in progress");
    const badge = $("review-status");
    if (badge) badge.classList.toggle("good", value === "complete");
    setText("mark-complete", value === "complete" ? "Reopen review" : "Mark review complete");
  }

  function feedbackFile() {
    const ts = new Date().toISOString().replace(/\.\d+Z$/, "Z"); // as the server writes it: whole seconds
    const before = fb.reviews || {};
    // every run of the iteration, then the reviews of runs it no longer holds (kept, as the server keeps them)
    const ids = fb.runIds ? fb.runIds.concat(Object.keys(before).concat(Object.keys(texts))
      .filter((id, i, all) => !fb.runIds.includes(id) && all.indexOf(id) === i)) : Object.keys(texts);
    // a review typed on this page is stamped now; an untouched one keeps its time (none if it never had one)
    return {
      reviews: ids.map((id) => {
        const old = before[id] || { run_id: id, feedback: "", timestamp: null };
        const text = texts[id] || "";
        const review = Object.assign({}, old, { feedback: text, timestamp: text === (old.feedback || "") ? old.timestamp : ts });
        if (marks[id] && marks[id].length) review.grade_marks = marks[id];
        else delete review.grade_marks;
        return review;
      }),
      status: status,
    };
  }

  function download() {
    const blob = new Blob([JSON.stringify(feedbackFile(), null, 2) + "\n"], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = "feedback.json";
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    dirty = false;
    setText("save-state", "feedback.json downloaded");
  }

  async function toggleComplete() {
    const next = status === "complete" ? "in_progress" : "complete";
    if (!served) {
      showStatus(next);
      download();
      return;
    }
    await flushAll();
    try {
      showStatus((await post("api/status", { status: next })).status);
      setText("save-state", next === "complete" ? "Review marked complete in feedback.json" : "Review reopened");
    } catch (err) {
      setText("save-state", "Not saved: " + err.message);
    }
  }

  // ---- wiring --------------------------------------------------------------------------------------

  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => showTab(tab.dataset.tab));
  }
  for (const link of document.querySelectorAll(".case-link")) {
    link.addEventListener("click", () => showCase(Number(link.dataset.index)));
  }
  if ($("prev")) $("prev").addEventListener("click", () => showCase(current - 1));
  if ($("next")) $("next").addEventListener("click", () => showCase(current + 1));
  if ($("mark-complete")) $("mark-complete").addEventListener("click", toggleComplete);
  if ($("download-feedback")) $("download-feedback").addEventListener("click", download);

  document.addEventListener("keydown", (event) => {
    if (activeTab !== "outputs" || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target.closest && target.closest("textarea, input, select, [contenteditable]")) return;
    if (event.key === "ArrowRight" || event.key === "j") {
      event.preventDefault();
      showCase(current + 1);
    } else if (event.key === "ArrowLeft" || event.key === "k") {
      event.preventDefault();
      showCase(current - 1);
    }
  });

  window.addEventListener("beforeunload", (event) => {
    if (served) {
      flushAll(true);
    } else if (dirty) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  const head = $("head");
  const measure = () => document.documentElement.style.setProperty("--head-h", head.offsetHeight + "px");
  measure();
  window.addEventListener("resize", measure);

  function caseInAddress() {
    const found = location.hash.match(/^#case=(.*)$/);
    if (!found) return -1;
    try {
      return cfg.cases.indexOf(decodeURIComponent(found[1]));
    } catch (err) {
      return -1; // not a valid escape: no case
    }
  }

  // a link to another case opened in this page (the address changed, the page did not reload)
  window.addEventListener("hashchange", () => {
    const index = caseInAddress();
    if (index < 0 || !cfg.tabs.includes("outputs")) return;
    showTab("outputs");
    showCase(index);
  });

  if (fb) showStatus(status);
  if (cfg.tabs.includes("outputs")) {
    showTab("outputs");
    showCase(Math.max(0, caseInAddress()));
  } else if (cfg.tabs.length) {
    showTab(cfg.tabs[0]);
  }
})();
