// The little JavaScript of the course site. Every page loads this file; each
// part below sets itself up only if its elements are on the page. Without
// JavaScript every page still reads top to bottom: all panels and views show (the
// side-by-side diff, built here from the unified one, says that it needs JavaScript).
//
// The address keeps what you chose, so that a reload keeps it and a link can
// point at it: the tab (#lesson, #code, #diff, #run), the diff layout
// (#diff-split, #compare-split) and the step of the recorded run (#step-3).
"use strict";

// ---- helpers ---------------------------------------------------------------

// The words this script shows, in the page's language: build.py embeds them as JSON
// (STRINGS[lang]["script"] there). t("sent", {n: 3}) fills in a template; a key with a
// "_one" form uses it for a count of one.
const STRINGS = (() => {
  const found = document.getElementById("site-strings");
  return found ? JSON.parse(found.textContent) : {};
})();

function t(key, values) {
  const count = values && values.n;
  const chosen = count === 1 && `${key}_one` in STRINGS ? `${key}_one` : key;
  const template = chosen in STRINGS ? STRINGS[chosen] : key;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (values && name in values ? String(values[name]) : whole));
}

// el("p", {class: "x"}, "text", child): a new element. Text is set as text, never as HTML.
function el(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined && value !== false) element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

function typingInAField(event) {
  const target = event.target;
  return target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName));
}

// The id the address points at ("" for none).
function hashId() {
  return location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : "";
}

// Put an id in the address without a new history entry and without jumping.
function remember(id) {
  if (hashId() !== id) history.replaceState(null, "", `#${id}`);
}

// A button that cannot be used now, but keeps the focus (a disabled button would drop it).
function setUsable(button, usable) {
  if (usable) button.removeAttribute("aria-disabled");
  else button.setAttribute("aria-disabled", "true");
}

// A hidden panel or view is taken out of the document, into a fragment, and put back when it
// shows: the page then holds only what can be seen (a chapter page has tens of thousands of
// elements, most of them highlighted code), which keeps the browser, a screen reader and an
// accessibility check from working through what is not shown.
const parked = new Map();

function setShown(element, shown) {
  element.hidden = !shown;
  if (shown && parked.has(element)) {
    element.append(parked.get(element));
    parked.delete(element);
  } else if (!shown && !parked.has(element)) {
    const fragment = document.createDocumentFragment();
    fragment.append(...element.childNodes);
    parked.set(element, fragment);
  }
}

// An element by id, shown or parked.
function findById(id) {
  if (!id) return null;
  const found = document.getElementById(id);
  if (found) return found;
  for (const fragment of parked.values()) {
    const inside = fragment.getElementById(id);
    if (inside) return inside;
  }
  return null;
}

// A link to something inside a folded part (a lesson's "Going deeper") opens it.
function openFoldsAround(target) {
  for (let up = target && target.parentElement; up; up = up.parentElement) {
    if (up.tagName === "DETAILS" && !up.open) up.open = true;
  }
}

// ---- chapter tabs: Lesson, Code, Diff, Run ------------------------------------
// The tabs are links to the panels (#lesson, #code, ...). The address decides
// which panel shows, so a tab can be bookmarked and the Back button works.

function setUpTabs() {
  const tabs = Array.from(document.querySelectorAll(".tabs a[href^='#']"));
  const panels = tabs.map((tab) => document.getElementById(tab.hash.slice(1)));
  if (!tabs.length || panels.includes(null)) return;
  let current = panels[0];

  const holds = (panel, target) => panel.contains(target) ||
    (parked.has(panel) && parked.get(panel).contains(target));

  function showPanelFor(id) {
    const target = findById(id);
    const panel = panels.find((candidate) => target && holds(candidate, target));
    if (panel) current = panel;  // a link to something outside the panels (#main) keeps the panel
    else if (!id) current = panels[0];  // no #...: the first tab, as the address says (Back)
    panels.forEach((candidate, index) => {
      setShown(candidate, candidate === current);
      if (candidate === current) tabs[index].setAttribute("aria-current", "true");
      else tabs[index].removeAttribute("aria-current");
    });
    document.documentElement.classList.add("ready");  // the panels are hidden or shown now
    document.dispatchEvent(new CustomEvent("panelshown", { detail: current.id }));
    openFoldsAround(target);
    // A step of the player (#step-3) shows the player from its top, not its chart's bar.
    const shown = target && (target.closest(".player") || target);
    if (target && target !== current && panel) shown.scrollIntoView();
    // A tab opened below the top of the panels opens at its top, not mid-page.
    else if (target === current) {
      const under = document.querySelector(".tabs").getBoundingClientRect().bottom;
      const top = current.getBoundingClientRect().top;
      if (top < under) window.scrollBy(0, top - under);
    }
  }

  window.addEventListener("hashchange", () => showPanelFor(hashId()));
  showPanelFor(hashId());
  // The browser's own jump to #step-3 (a bar of the player's chart) comes when the page has
  // loaded, and would leave the step under the bars: the player's top goes under the tabs.
  window.addEventListener("load", () => {
    const target = findById(hashId());
    const player = target && target.closest(".player");
    if (player) player.scrollIntoView();
  });
}

// ---- diffs: unified or side by side ---------------------------------------------

// Where two columns of code cannot be read (site.css hides the switch there), the diff is
// unified whatever the address says: below 56rem, and from 64rem, where the sidebar takes
// 16rem, up to 72rem.
const NARROW = window.matchMedia("(max-width: 56rem), (min-width: 64rem) and (max-width: 72rem)");

function setUpDiffSwitches() {
  for (const group of document.querySelectorAll(".view-switch")) {
    const buttons = Array.from(group.querySelectorAll("button[data-view]"));
    const views = new Map(buttons.map((button) => [button, document.getElementById(button.dataset.view)]));
    let wanted = null;
    const choose = (chosen) => {
      wanted = chosen;
      const shown = NARROW.matches ? buttons[0] : chosen;
      for (const button of buttons) {
        const on = button === shown;
        button.setAttribute("aria-pressed", String(on));
        setShown(views.get(button), on);
      }
    };
    const fromAddress = () => buttons.find((button) => button.dataset.view === hashId());
    buttons.forEach((button) => button.addEventListener("click", () => {
      choose(button);
      remember(button.dataset.view);
    }));
    window.addEventListener("hashchange", () => { if (fromAddress()) choose(fromAddress()); });
    NARROW.addEventListener("change", () => choose(wanted));
    choose(fromAddress() || buttons[0]);
  }
}

// The side-by-side view is built here from the unified one (the page sends the diff once:
// both made the heaviest pages twice as heavy). In each hunk, the lines removed go left and
// the lines added right, paired in order, with an empty line opposite the side that has
// fewer; a context line goes on both sides. A unified gutter reads "old new sign", each
// number padded to the same width; every line's HTML stands alone (highlight.py).
// The lines of a unified view, each as [kind, old number, new number, its HTML] (a hunk's
// numbers are ""): its gutter reads "old new sign", each number padded to the same width, and
// every line's HTML stands alone (highlight.py).
function unifiedLines(rows) {
  const gutterRuns = rows.querySelector("pre.gutter").children;
  const codeRuns = rows.querySelector("pre.lines > code").children;
  const lines = [];
  for (let run = 0; run < codeRuns.length; run++) {
    const kind = codeRuns[run].className;
    const gutters = gutterRuns[run].textContent.split("\n");
    codeRuns[run].innerHTML.split("\n").slice(0, -1).forEach((code, k) => {
      const width = (gutters[k].length - 3) / 2;
      lines.push([kind, gutters[k].slice(0, width), gutters[k].slice(width + 1, 2 * width + 1), code]);
    });
  }
  return lines;
}

function buildSplitViews() {
  for (const note of document.querySelectorAll("p.split-from-unified")) {
    const view = note.closest(".diff-view");
    const rows = document.getElementById(view.id.replace(/split$/, "unified")).querySelector(".rows");
    const left = [], right = [];
    let removed = [], added = [];
    const pair = () => {
      for (let k = 0; k < Math.max(removed.length, added.length); k++) {
        left.push(removed[k] || ["empty", "", ""]);
        right.push(added[k] || ["empty", "", ""]);
      }
      removed = [];
      added = [];
    };
    for (const [kind, old, now, code] of unifiedLines(rows)) {
      if (kind === "removed") removed.push([kind, `${old} -`, code]);
      else if (kind === "added") added.push([kind, `${now} +`, code]);
      else {
        pair();
        left.push([kind, old && `${old}  `, code]);
        right.push([kind, now && `${now}  `, code]);
      }
    }
    pair();
    const english = rows.getAttribute("lang") ? ` lang="${rows.getAttribute("lang")}"` : "";
    const column = (lines, label) => {  // lines of one kind in a row share one element
      let gutter = "", code = "";
      for (let k = 0; k < lines.length;) {
        const kind = lines[k][0];
        const tag = { added: "ins", removed: "del" }[kind] || "span";
        let numbers = "", text = "";
        for (; k < lines.length && lines[k][0] === kind; k++) {
          numbers += `${lines[k][1]}\n`;
          text += `${lines[k][2]}\n`;
        }
        gutter += `<span class="${kind}">${numbers}</span>`;
        code += `<${tag} class="${kind}">${text}</${tag}>`;
      }
      return `<div class="scroll hl" tabindex="0" role="region" aria-label="${escapeHtml(label).replace(/"/g, "&quot;")}">` +
        `<div class="rows"${english}><pre class="gutter" aria-hidden="true">${gutter}</pre>` +
        `<pre class="lines"><code>${code}</code></pre></div></div>`;
    };
    note.outerHTML = `<div class="split">${column(left, note.dataset.oldLabel)}${column(right, note.dataset.newLabel)}</div>`;
  }
}

// On a phone a line of code cut at the edge is a line half read (a 366 px column shows 36
// characters, and half of s11's lines are longer): there the unified diff is shown wrapped,
// a line at a time, each with one number (the new file's; the old one's for a line removed)
// and its sign, and the part that does not fit on the next line, indented two more than the
// line, up to 18 (site.css). It is built here from the unified view the first time a phone width
// is met, and shown by site.css below 40rem.
const PHONE = window.matchMedia("(max-width: 40rem)");

function buildWrappedViews() {
  for (const view of document.querySelectorAll(".diff-view .scroll:not(.has-wrapped)")) {
    const rows = view.querySelector(":scope > .rows");
    if (!rows || view.closest(".split")) continue;
    let lines = "";
    for (const [kind, old, now, code] of unifiedLines(rows)) {
      const tag = { added: "ins", removed: "del" }[kind] || "span";
      const number = (kind === "removed" ? old : now).trim();
      const sign = { added: "+", removed: "-" }[kind] || " ";
      const indent = Math.min(/^ */.exec(code)[0].length, 16);  // (a deep one fills half the line)
      lines += `<div class="${kind}"><span class="n" aria-hidden="true">${number && number + sign}</span>` +
        `<${tag} class="line" style="--indent:${indent}">${code}</${tag}></div>`;
    }
    const english = rows.getAttribute("lang") ? ` lang="${rows.getAttribute("lang")}"` : "";
    view.insertAdjacentHTML("beforeend", `<div class="wrapped"${english}><code>${lines}</code></div>`);
    view.classList.add("has-wrapped");
  }
}

function setUpWrappedViews() {
  if (PHONE.matches) buildWrappedViews();
  else PHONE.addEventListener("change", () => { if (PHONE.matches) buildWrappedViews(); });
}

// Side by side, the two columns scroll sideways together, by one scrollbar that stays at the
// bottom of the window (a column is as tall as the diff: its own would be far below).
function setUpSplitScrolling() {
  for (const split of document.querySelectorAll(".split")) {
    const columns = Array.from(split.querySelectorAll(":scope > .scroll"));
    const bar = el("div", { class: "split-scrollbar", "aria-hidden": "true" }, el("div", {}));
    split.after(bar);
    const all = [...columns, bar];
    let leader = null;
    const follow = (source) => {
      if (leader && leader !== source) return;
      leader = source;
      for (const other of all) if (other !== source && other.scrollLeft !== source.scrollLeft) other.scrollLeft = source.scrollLeft;
      requestAnimationFrame(() => { leader = null; });
    };
    all.forEach((part) => part.addEventListener("scroll", () => follow(part), { passive: true }));
    const measure = () => {
      if (!split.isConnected || !columns[0].checkVisibility()) { bar.hidden = true; return; }
      const widest = Math.max(...columns.map((column) => column.scrollWidth - column.clientWidth));
      bar.hidden = widest <= 1;
      bar.firstChild.style.width = `${bar.clientWidth + widest}px`;
    };
    window.addEventListener("resize", measure);
    new ResizeObserver(measure).observe(split);
    document.addEventListener("panelshown", measure);
    measure();
  }
}

// ---- compare: open the page of the chosen pair -------------------------------------

function setUpComparePicker() {
  const form = document.getElementById("compare-picker");
  if (!form) return;
  const message = document.getElementById("compare-message");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const oldSelect = form.elements.old, newSelect = form.elements.new;
    let from = oldSelect.selectedIndex, to = newSelect.selectedIndex;
    if (from === to) {
      message.textContent = t("pick_two");
      return;
    }
    if (from > to) [from, to] = [to, from];  // always older → newer
    location.href = `compare-${oldSelect.options[from].value}-vs-${newSelect.options[to].value}.html`;
  });
}

// ---- the Run player: step through the recorded model calls -------------------------

// A message's content as a list of blocks (the API also takes a plain string).
function blocksOf(message) {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

// "Reminders" are the text blocks the harness adds to a request, such as "<reminder>...": they
// start with a tag of the run data's harness_tags (a model's "<summary>" is not one of them).
let harnessTags = [];
function isReminder(block, sent) {
  if (!sent || block.type !== "text" || typeof block.text !== "string") return false;
  const tag = /^\s*<(\w+)/.exec(block.text);
  return Boolean(tag) && harnessTags.includes(tag[1]);
}

// For each message, for each block: is it new since the previous call?
function newBlocks(previousMessages, messages) {
  return messages.map((message, index) => {
    const before = previousMessages ? previousMessages[index] : undefined;
    const blocks = blocksOf(message);
    if (!before || before.role !== message.role) return blocks.map(() => true);
    const oldBlocks = blocksOf(before);
    return blocks.map((block, k) => k >= oldBlocks.length || JSON.stringify(block) !== JSON.stringify(oldBlocks[k]));
  });
}

function toolNames(messages) {
  const names = {};
  for (const message of messages) {
    for (const block of blocksOf(message)) if (block.type === "tool_use") names[block.id] = block.name;
  }
  return names;
}

function resultText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content, null, 2);
  return content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

// A tool's input, field by field: text as it reads (real line breaks, not "\n"), the rest as JSON.
function renderInput(input) {
  if (!input || typeof input !== "object" || Array.isArray(input) || !Object.keys(input).length) {
    return el("pre", { lang: "en" }, JSON.stringify(input, null, 2));
  }
  const fields = el("dl", { class: "input", lang: "en" });
  for (const [key, value] of Object.entries(input)) {
    fields.append(el("dt", {}, key),
      el("dd", {}, el("pre", {}, typeof value === "string" ? value : JSON.stringify(value, null, 2))));
  }
  return fields;
}

// The plan of an exit_plan_mode call, as build.py rendered its Markdown (a <template>).
function renderedPlan(block) {
  const template = document.getElementById(`plan-${block.id}`);
  if (block.name !== "exit_plan_mode" || !template) return null;
  return el("div", { class: "plan", lang: "en" }, template.content.cloneNode(true));
}

function renderBlock(block, isNew, names, role) {
  const classes = ["block", block.type];
  const tags = [];
  if (isNew) { classes.push("new"); tags.push("new"); }
  if (isReminder(block, role === "user")) { classes.push("reminder"); tags.push("reminder"); }
  if (block.is_error) { classes.push("error"); tags.push("is_error"); }
  let heading, body;
  if (block.type === "text") {
    heading = "text";
    body = el("pre", { lang: "en" }, block.text);
  } else if (block.type === "tool_use") {
    heading = `tool_use: ${block.name} (${block.id})`;
    const plan = renderedPlan(block);
    body = plan ? el("div", {}, plan, el("details", {}, el("summary", {}, t("input_as_sent")), renderInput(block.input)))
      : renderInput(block.input);
  } else if (block.type === "tool_result") {
    heading = t("tool_result_for", { name: names[block.tool_use_id] || "?", id: block.tool_use_id });
    body = el("pre", { lang: "en" }, resultText(block.content));
  } else {
    heading = block.type;
    body = el("pre", { lang: "en" }, JSON.stringify(block, null, 2));
  }
  const label = el("p", { class: "block-head" }, heading);
  const tagWords = { new: t("tag_new"), reminder: t("tag_reminder"), is_error: "is_error" };
  for (const tag of tags) label.append(" ", el("span", { class: `tag ${tag}` }, tagWords[tag]));
  return el("div", { class: classes.join(" ") }, label, body);
}

// What the user was asked in the terminal, and what they answered, after a tool_use.
function renderEvent(event) {
  return el("div", { class: "block user-event" },
    el("p", { class: "block-head" }, t("asked"), el("span", { class: "tag user" }, t("tag_user"))),
    el("pre", { lang: "en" }, event.question),
    el("p", { class: "answer" }, t("answered"),
      event.answer === "" ? el("strong", {}, t("empty_line")) : el("strong", { lang: "en" }, event.answer)));
}

function renderMessage(message, marks, names, events) {
  const box = el("div", { class: `message ${message.role}` }, el("p", { class: "role", lang: "en" }, message.role));
  blocksOf(message).forEach((block, k) => {
    box.append(renderBlock(block, marks[k], names, message.role));
    for (const event of (events && events[block.id]) || []) box.append(renderEvent(event));
  });
  return box;
}

// The newest todo list a todo_write call set successfully (its result is not an error).
function latestTodos(messages) {
  const failed = new Set();
  for (const message of messages) {
    for (const block of blocksOf(message)) if (block.type === "tool_result" && block.is_error) failed.add(block.tool_use_id);
  }
  let todos = null;
  for (const message of messages) {
    for (const block of blocksOf(message)) {
      if (block.type === "tool_use" && block.name === "todo_write" && !failed.has(block.id) && Array.isArray(block.input.todos)) {
        todos = block.input.todos;
      }
    }
  }
  return todos;
}

function renderState(request, previousRequest) {
  const names = (request.tools || []).map((tool) => tool.name);
  const before = previousRequest ? (previousRequest.tools || []).map((tool) => tool.name) : names;
  const list = el("dl", { class: "state" });
  const toolList = el("dd", {});
  names.forEach((name, index) => {
    toolList.append(index ? ", " : "", el("code", { class: before.includes(name) ? null : "changed", lang: "en" }, name));
  });
  const gone = before.filter((name) => !names.includes(name));
  if (gone.length) toolList.append(el("span", { class: "changed" }, t("no_longer_offered", { names: gone.join(", ") })));
  list.append(el("dt", {}, t("tools_offered")), toolList);

  // Plan mode shows in the tools: in it, exit_plan_mode is offered and enter_plan_mode is not.
  if (names.includes("enter_plan_mode") || names.includes("exit_plan_mode")) {
    const on = names.includes("exit_plan_mode") && !names.includes("enter_plan_mode");
    list.append(el("dt", {}, t("plan_mode")), el("dd", {}, on ? t("plan_on") : t("plan_off")));
  }

  const todos = latestTodos(request.messages);
  if (todos) {
    const items = el("ul", { class: "todos" });
    const marks = { completed: "☑", in_progress: "◐", pending: "☐" };
    for (const todo of todos) {
      const status = String(todo.status);
      items.append(el("li", { class: `todo ${status}`, lang: "en" },
        el("span", { class: "todo-mark", "aria-hidden": "true" }, marks[status] || "•"),
        ` ${status === "in_progress" && todo.activeForm ? todo.activeForm : todo.content} `,
        el("span", { class: "tag" }, status)));
    }
    list.append(el("dt", {}, t("todo_list")), el("dd", {}, items));
  }

  const systemChanged = previousRequest && JSON.stringify(previousRequest.system) !== JSON.stringify(request.system);
  const system = typeof request.system === "string" ? request.system : JSON.stringify(request.system, null, 2);
  const details = el("details", {}, el("summary", {}, t(systemChanged ? "system_prompt_changed" : "system_prompt")), el("pre", { lang: "en" }, system));
  list.append(el("dt", {}, t("model_and_limits")), el("dd", { lang: "en" }, `${request.model}, max_tokens ${request.max_tokens}`));
  list.append(el("dt", {}, t("system")), el("dd", {}, details));
  return list;
}

function renderStep(calls, steps, step) {
  const { request, response } = calls[step];
  // what is new is what is new in this conversation (a subagent's, or the main agent's)
  const before = steps[step] ? steps[step].previous : step - 1;
  const previous = before === null || before === undefined || before < 0 ? null : calls[before].request;
  const messages = request.messages || [];
  const marks = newBlocks(previous ? previous.messages : null, messages);
  const names = toolNames(messages.concat([{ role: "assistant", content: response.content || [] }]));
  const events = (steps[step] && steps[step].events) || {};

  const sent = el("section", { class: "sent", "aria-labelledby": "sent-title" },
    el("h4", { id: "sent-title" }, t("sent", { n: messages.length })));
  // Messages sent before, unchanged, fold away: what is new stays in view.
  const firstNew = marks.findIndex((blockMarks) => blockMarks.some(Boolean));
  const foldUpTo = firstNew === -1 ? messages.length : firstNew;
  if (foldUpTo > 0) {
    const fold = el("details", { class: "earlier" },
      el("summary", {}, t("earlier", { n: foldUpTo })));
    for (let i = 0; i < foldUpTo; i++) fold.append(renderMessage(messages[i], marks[i], names));
    sent.append(fold);
  }
  for (let i = foldUpTo; i < messages.length; i++) sent.append(renderMessage(messages[i], marks[i], names));

  const received = el("section", { class: "received", "aria-labelledby": "received-title" },
    el("h4", { id: "received-title" }, t("received", { stop: response.stop_reason })),
    renderMessage({ role: "assistant", content: response.content || [] }, (response.content || []).map(() => false), names, events));

  const state = el("section", { class: "session-state", "aria-labelledby": "state-title" },
    el("h4", { id: "state-title" }, t("session_state")), renderState(request, previous));

  return [sent, received, state];
}

// A <pre> that scrolls must take the keyboard's focus, or its end cannot be reached.
function focusableIfScrolling(root) {
  for (const pre of root.querySelectorAll("pre")) {
    if (pre.scrollHeight > pre.clientHeight + 1 || pre.scrollWidth > pre.clientWidth + 1) pre.tabIndex = 0;
  }
}

function setUpPlayer() {
  const data = document.getElementById("run-data");
  const view = document.getElementById("step-view");
  const player = document.getElementById("player");
  if (!data || !view || !player) return;
  const { calls, steps, shared, harness_tags: tags } = JSON.parse(data.textContent);
  // each request's system prompt and tools are sent once in the page (run_tab.shared_parts)
  for (const call of calls) {
    for (const [key, values] of Object.entries(shared || {})) {
      if (typeof call.request[key] === "number") call.request[key] = values[call.request[key]];
    }
  }
  harnessTags = tags || [];
  const counter = document.getElementById("step-counter");
  const caption = document.getElementById("step-caption");
  const value = document.getElementById("mini-value");
  const previousButton = document.getElementById("step-previous");
  const nextButton = document.getElementById("step-next");
  const panel = document.getElementById("run");
  const bars = Array.from(player.querySelectorAll(".bars .bar"));
  const chartBars = Array.from(document.querySelectorAll(".chart .bar"));
  player.hidden = false;
  let step = 0;

  function stepFromAddress() {
    const found = /^step-(\d+)$/.exec(hashId());
    return found ? Number(found[1]) - 1 : null;
  }

  // On a phone the caption shows three lines: a button says when there is more, and shows it.
  const more = el("button", { type: "button", class: "caption-more", "aria-expanded": "false",
    "aria-controls": "step-caption", hidden: "" }, t("more"));
  caption.after(more);
  const fitCaption = () => {
    const open = more.getAttribute("aria-expanded") === "true";
    caption.classList.toggle("open", open);
    more.textContent = t(open ? "less" : "more");
    more.hidden = !open && caption.scrollHeight <= caption.clientHeight + 1;
  };
  more.addEventListener("click", () => {
    more.setAttribute("aria-expanded", String(more.getAttribute("aria-expanded") !== "true"));
    fitCaption();
  });
  window.addEventListener("resize", fitCaption);
  document.addEventListener("panelshown", fitCaption);

  function go(to, byUser) {
    step = Math.max(0, Math.min(calls.length - 1, to));
    counter.textContent = t("step_counter", { step: step + 1, steps: calls.length });
    caption.textContent = (steps[step] && steps[step].caption) || "";
    more.setAttribute("aria-expanded", "false");
    fitCaption();
    setUsable(previousButton, step > 0);
    setUsable(nextButton, step < calls.length - 1);
    view.replaceChildren(...renderStep(calls, steps, step));
    bars.forEach((bar, index) => {
      if (index === step) bar.setAttribute("aria-current", "step");
      else bar.removeAttribute("aria-current");
    });
    chartBars.forEach((bar, index) => bar.classList.toggle("current", index === step));
    if (value && bars[step]) value.textContent = bars[step].getAttribute("aria-label");
    if (byUser) remember(`step-${step + 1}`);
    if (panel && !panel.hidden) focusableIfScrolling(view);
  }

  const usable = (button) => button.getAttribute("aria-disabled") !== "true";
  previousButton.addEventListener("click", () => { if (usable(previousButton)) go(step - 1, true); });
  nextButton.addEventListener("click", () => { if (usable(nextButton)) go(step + 1, true); });
  bars.forEach((bar, index) => bar.addEventListener("click", () => go(index, true)));
  document.addEventListener("keydown", (event) => {
    if ((panel && panel.hidden) || typingInAField(event)) return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const moves = { ArrowLeft: step - 1, ArrowRight: step + 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    go(moves[event.key], true);
  });
  window.addEventListener("hashchange", () => {
    const wanted = stepFromAddress();
    if (wanted !== null && wanted !== step) go(wanted, false);
  });
  document.addEventListener("panelshown", (event) => {
    if (event.detail === "run") focusableIfScrolling(view);
  });
  go(stepFromAddress() || 0, false);
}

// Lesson code and diagrams that are wider than the page scroll: they take the focus (build.py
// gives them tabindex="0") only while they need to.
function setUpScrollingBlocks() {
  const blocks = Array.from(document.querySelectorAll("div.hl > pre[tabindex='0'], .diagram pre[tabindex='0'], .table-scroll, .diagram-scroll"));
  // A diagram wider than its box shows that it scrolls: its hidden side fades out (data-more).
  const edges = (box) => {
    const hidden = box.scrollWidth - box.clientWidth;
    const more = [box.scrollLeft > 1 ? "left" : "", hidden - box.scrollLeft > 1 ? "right" : ""];
    const value = hidden > 1 ? more.filter(Boolean).join(" ") : "";
    if (value) box.dataset.more = value;
    else delete box.dataset.more;
  };
  const update = () => {
    for (const pre of blocks) {
      if (!pre.isConnected || !pre.checkVisibility()) continue;  // not shown: left as it is
      if (pre.scrollWidth > pre.clientWidth + 1 || pre.scrollHeight > pre.clientHeight + 1) pre.tabIndex = 0;
      else pre.removeAttribute("tabindex");
      if (pre.matches(".diagram-scroll, .diagram pre")) edges(pre);
    }
  };
  if (!blocks.length) return;
  for (const box of blocks) {
    if (box.matches(".diagram-scroll, .diagram pre")) {
      box.addEventListener("scroll", () => edges(box), { passive: true });
    }
  }
  window.addEventListener("load", update);  // the images have their size
  window.addEventListener("resize", update);
  document.addEventListener("panelshown", update);
  document.addEventListener("toggle", update, true);  // a folded part opened shows its tables
  document.addEventListener("DOMContentLoaded", update);  // after the tabs have shown a panel
}

// ---- the language switch ---------------------------------------------------------
// A plain link to the same page in the other language. On the way there it takes the
// address's #... along, so that the tab, the diff layout and the step stay as they are.

// ---- a lesson's contents: folded on a phone (its first screen shows the lesson), open wider

function setUpContents() {
  if (!matchMedia("(min-width: 40.01rem)").matches) return;
  for (const fold of document.querySelectorAll("details.toc-fold")) fold.open = true;
}

function setUpLanguageSwitch() {
  for (const link of document.querySelectorAll("a.language-switch")) {
    const page = link.getAttribute("href").split("#")[0];
    const follow = () => link.setAttribute("href", page + location.search + location.hash);
    for (const event of ["click", "auxclick", "contextmenu", "focus", "pointerenter"]) {
      link.addEventListener(event, follow);
    }
  }
}

// ---- the sticky bars ----------------------------------------------------------------
// The player's bar sticks right under the tab bar, and a heading, a line of code or a step
// opened by a link lands under it: the tab bar's real height, kept in a CSS variable.

function setUpStickyBars() {
  const tabs = document.querySelector(".tabs");
  if (!tabs) return;
  const root = document.documentElement.style;
  const measure = () => {
    root.setProperty("--tabs-height", `${tabs.getBoundingClientRect().height}px`);
  };
  measure();
  new ResizeObserver(measure).observe(tabs);
}

// What takes the focus (Tab, Shift+Tab) is scrolled out from under the sticky bars: the tab
// bar, and the player's bar on the Run tab.
function setUpFocusBelowBars() {
  if (!document.querySelector(".tabs")) return;
  const check = (element) => {
    const bars = Array.from(document.querySelectorAll(".tabs, .player-bar"));  // as shown now
    // the keyboard's focus only (a click does not move the page), on what fits in the window
    if (!element.isConnected || !element.matches(":focus-visible")) return;
    if (bars.some((bar) => bar.contains(element))) return;
    const under = Math.max(0, ...bars.filter((bar) => bar.checkVisibility())
      .map((bar) => bar.getBoundingClientRect().bottom));
    const box = element.getBoundingClientRect();
    if (box.top < under && box.bottom > 0 && box.height < window.innerHeight - under) {
      window.scrollBy(0, box.top - under - 8);
    }
  };
  document.addEventListener("focusin", (event) => {
    const element = event.target;
    check(element);
    requestAnimationFrame(() => check(element));  // after the browser's own scroll
  });
}

// ---- copy buttons -------------------------------------------------------------------
// Every command and code block gets a button that copies its text exactly (the "$ " of a
// shown command is not part of it). The text is kept on the button, data-copy.

function copyButton(text, command) {
  const button = el("button", { type: "button", class: "copy", "data-copy": text,
    "aria-label": t(command ? "copy_label" : "copy_code_label") }, t("copy"));
  let timer = 0;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(button.dataset.copy);
      button.textContent = t("copied");
    } catch (error) {
      button.textContent = t("copy");
    }
    clearTimeout(timer);  // "Copied" for two seconds, then the button is ready again
    timer = setTimeout(() => { button.textContent = t("copy"); }, 2000);
  });
  return button;
}

function setUpCopyButtons(root) {
  // a command inside a sentence (the replay, Build it yourself): a button after it
  for (const code of root.querySelectorAll("code.command")) {
    if (code.dataset.copyReady) continue;
    code.dataset.copyReady = "true";
    const button = copyButton(code.textContent, true);
    button.classList.add("inline");
    code.after(" ", button);
  }
  const blocks = root.querySelectorAll("pre.command, div.hl > pre, .code-view .lines");
  for (const block of blocks) {
    const holder = block.closest(".code-view") || block.parentElement.closest("div.hl") || block;
    if (holder.dataset.copyReady) continue;
    holder.dataset.copyReady = "true";
    let text = block.textContent.replace(/\n$/, "");
    if (block.matches("pre.command") && text.startsWith("$ ")) text = text.slice(2);
    const command = block.matches("pre.command") || (holder.classList && holder.classList.contains("command"));
    const button = copyButton(text, command);
    const wrapper = el("div", { class: "copyable" });
    holder.replaceWith(wrapper);
    wrapper.append(button, holder);
  }
}

// ---- search -------------------------------------------------------------------------

function escapeHtml(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

// The text of a page's words `from` to `to` (0, 1, ...: Pagefind's locations count them), as
// Pagefind's own excerpts split them: its raw_content, at U+200B where it segmented the page
// (Chinese), else at spaces. raw_content has "<" and ">" escaped ("&lt;"), and content has
// neither the escapes nor the U+200B: the text comes from content, walked beside raw_content
// (where content has "&", "&lt;" was in the page as it is).
function textBetween(page, from, to) {
  const raw = page.raw_content || "", content = page.content || "";
  if (!raw.includes("\u200b")) return content.split(/[\r\n\s]+/g).slice(from, to).join(" ");
  const words = raw.split("\u200b");
  const offset = (word) => words.slice(0, word).reduce((sum, text) => sum + text.length + 1, 0);
  let i = 0, j = 0;  // in raw, in content
  const walkTo = (end) => {
    while (i < end) {
      if (raw[i] === "\u200b") i += 1;
      else if (content[j] === "<" && raw.startsWith("&lt;", i)) { i += 4; j += 1; }
      else if (content[j] === ">" && raw.startsWith("&gt;", i)) { i += 4; j += 1; }
      else { i += 1; j += 1; }
    }
    return j;
  };
  const start = walkTo(offset(from));
  return content.slice(start, walkTo(offset(to)));
}

// The words searched for, marked whole in an excerpt (escaped HTML): Pagefind's Chinese index
// splits "cache_control" and would mark "cache" alone. Where none is found as written (a word
// Pagefind matched by its stem), its own marks stay, but for a mark that is only a piece of a
// longer word ("cache" of cache_read_input_tokens): that is not the word searched for.
function markWords(excerpt, words) {
  const terms = words.trim().split(/\s+/).filter(Boolean).map((word) => escapeHtml(word));
  if (!terms.length) return excerpt;
  const plain = excerpt.replace(/<\/?mark>/g, "");
  const alternatives = terms.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  const pattern = new RegExp(`(&#?\\w+;)|(${alternatives})`, "gi");  // an entity is left whole
  let marked = false;
  const result = plain.replace(pattern, (found, entity) => {
    if (entity) return entity;
    marked = true;
    return `<mark>${found}</mark>`;
  });
  if (marked) return result;
  return excerpt.replace(/(\w?)<mark>([^<]*)<\/mark>(?=(\w?))/g,
    (all, before, text, after) => (before || after ? before + text : all));
}
// The search page asks Pagefind's index (pagefind/, made by the build) through its
// JavaScript API; the address keeps the words (search.html?q=cache_control).

function setUpSearch() {
  const form = document.getElementById("search-form");
  if (!form) return;
  const input = document.getElementById("search-input");
  const status = document.getElementById("search-status");
  const list = document.getElementById("search-results");
  let pagefind = null;
  let asked = 0;

  async function engine() {
    if (!pagefind) {
      pagefind = await import(new URL(`${form.dataset.bundle}pagefind.js`, location.href).href);
      await pagefind.options({ baseUrl: new URL(form.dataset.site || "./", location.href).pathname });
    }
    return pagefind;
  }

  async function find(words) {
    const mine = ++asked;
    list.replaceChildren();
    if (!words.trim()) { status.textContent = ""; return; }
    status.textContent = t("searching");
    let results;
    try {
      results = await (await engine()).search(words);
    } catch (error) {
      status.textContent = t("search_served");
      return;
    }
    const data = await Promise.all(results.results.slice(0, 10).map((result) => result.data()));
    if (mine !== asked) return;
    status.textContent = data.length ? t("found", { n: results.results.length }) : t("found_none");
    if (!data.length) {  // the other language's pages may have it: a link to search them
      const other = new URL(document.querySelector("a.language-switch").getAttribute("href").split(/[?#]/)[0], location.href);
      other.searchParams.set("q", words);
      list.append(el("li", {}, el("a", { href: other.href, hreflang: document.querySelector("a.language-switch").hreflang },
        t("search_other", { words }))));
      return;
    }
    for (const page of data) {
      const best = (page.sub_results || [])[0];
      const hit = best && best.url.endsWith("#code-file") ? codeHit(page, best) : null;
      const url = hit ? best.url.replace(/#code-file$/, `#code-L${hit.line}`) : (best ? best.url : page.url);
      const link = el("a", { href: url }, page.meta.title || page.url);
      const excerpt = el("p", { class: "excerpt" });
      excerpt.innerHTML = markWords((best || page).excerpt, words);  // Pagefind's text, escaped
      const item = el("li", {}, link, excerpt);
      list.append(item);
      if (hit) showCodeLines(link, excerpt, hit, words);
    }
  }

  // Where in the code a hit is: the last line anchor (#code-L40) at or before the hit's first
  // word (the build anchors some lines: web/sitebuild/code_tab.py), and how many characters,
  // not counting spaces, come between that line's start and the hit.
  function codeHit(page, sub) {
    const at = (sub.locations || [])[0];
    let line = 0, from = 0;
    for (const anchor of page.anchors || []) {
      const found = /^code-L(\d+)$/.exec(anchor.id);
      if (found && anchor.location <= at) [line, from] = [Number(found[1]), anchor.location];
    }
    if (!line) return null;
    return { line, before: textBetween(page, from, at).replace(/\s+/g, "").length };
  }

  // The line of code.py (its lines) that holds the hit: counted on from the anchor's line.
  function lineOfHit(lines, hit) {
    let left = hit.before;
    for (let number = hit.line; number <= lines.length; number++) {
      const count = lines[number - 1].replace(/\s+/g, "").length;
      if (left < count) return number;
      left -= count;
    }
    return hit.line;
  }

  // A hit in code links to its line and shows its lines as they are (Pagefind's excerpt runs
  // them together): the chapter's code.py, copied into the site as code/sNN_x.py. (Until it
  // comes, or if it cannot, the link goes to the anchor's line, a few lines above.)
  async function showCodeLines(link, excerpt, hit, words) {
    const name = /([^/]+)\.html#/.exec(link.getAttribute("href"));
    if (!name) return;
    try {
      const response = await fetch(new URL(`code/${name[1]}.py`, new URL(form.dataset.site || "./", location.href)));
      if (!response.ok) return;
      const lines = (await response.text()).split("\n");
      const line = lineOfHit(lines, hit);
      link.setAttribute("href", link.getAttribute("href").replace(/#code-L\d+$/, `#code-L${line}`));
      const shown = lines.slice(Math.max(0, line - 2), line + 1).join("\n");
      const pre = el("pre", { class: "hit-lines", lang: "en" });
      pre.innerHTML = markWords(escapeHtml(shown), words);
      excerpt.replaceWith(el("p", { class: "hit-where" }, t("code_line", { name: name[1], n: line })), pre);
    } catch (error) { /* the excerpt stays */ }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const url = new URL(location.href);
    url.searchParams.set("q", input.value);
    history.replaceState(null, "", url);
    find(input.value);
  });
  const words = new URLSearchParams(location.search).get("q");
  if (words) {
    input.value = words;
    find(words);
  }
}


// ---- the menu, the header's search, where you are ----------------------------------
// At desktop widths the chapters are a sidebar beside the page; on a phone the same list is
// the menu that the header's button opens.

function setUpMenu() {
  const button = document.querySelector(".menu-button");
  const menu = document.getElementById("site-menu");
  if (!button || !menu) return;
  button.hidden = false;
  const set = (open) => {
    button.setAttribute("aria-expanded", String(open));
    document.documentElement.classList.toggle("menu-open", open);
  };
  button.addEventListener("click", () => set(button.getAttribute("aria-expanded") !== "true"));
  menu.addEventListener("click", (event) => { if (event.target.closest("a")) set(false); });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
      set(false);
      button.focus();
    }
  });
}

// "/" (or "s") goes to the search: the header's field, or the search page's own, or (on a
// phone, where the header has a link) the search page.
function setUpSearchShortcut() {
  document.addEventListener("keydown", (event) => {
    if (typingInAField(event) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key !== "/" && event.key !== "s") return;
    const field = [document.getElementById("search-input"), document.getElementById("header-search")]
      .find((found) => found && found.checkVisibility());
    event.preventDefault();
    if (field) field.focus();
    else location.href = document.querySelector("a.search-link").href;
  });
}

// The contents lists (the lesson's and the sidebar's) mark the section being read: the last
// heading above the middle of the space under the sticky bars.
function setUpWhereYouAre() {
  const links = Array.from(document.querySelectorAll(".toc a[href^='#'], .side-toc a[href^='#']"));
  if (!links.length) return;
  const ids = [...new Set(links.map((link) => link.hash.slice(1)))];
  let scheduled = false;
  const mark = () => {
    scheduled = false;
    const tabs = document.querySelector(".tabs");
    const under = tabs ? tabs.getBoundingClientRect().bottom : 0;
    const reach = under + (window.innerHeight - under) / 3;
    let here = null;
    for (const id of ids) {
      const heading = document.getElementById(id);
      if (!heading || !heading.checkVisibility()) continue;
      if (heading.getBoundingClientRect().top <= reach) here = id;
    }
    // The heading the address points at, at the top of the reading space, is the one being
    // read, though a short section puts the next heading above the line too (s06's "Run it").
    const target = ids.includes(hashId()) && document.getElementById(hashId());
    if (target && target.checkVisibility()) {
      const top = target.getBoundingClientRect().top;
      if (top >= under - 2 && top <= reach) here = hashId();
    }
    for (const link of links) {
      if (link.hash.slice(1) === here) link.setAttribute("aria-current", "location");
      else link.removeAttribute("aria-current");
    }
  };
  const later = () => { if (!scheduled) { scheduled = true; requestAnimationFrame(mark); } };
  window.addEventListener("scroll", later, { passive: true });
  window.addEventListener("resize", later);
  document.addEventListener("panelshown", later);
  document.addEventListener("toggle", later, true);
  later();
}

// ---- lines of code: the one linked to is marked, and a line number gives its link ---------
// The build writes the anchors (<b id=code-L42>) of some lines only (the lines the site links
// to, the banners, every 20th: web/sitebuild/code_tab.py): the others are added here, before
// the tabs read the address. A newline ends a line only in a text node that is a child of a
// run of lines (an <ins> or a <span> of pre.lines > code): the highlighting is cut at each.

function addLineAnchors() {
  const code = document.querySelector(".code-view pre.lines > code");
  if (!code) return;
  let number = 1, atStart = true;
  const anchor = () => el("b", { id: `code-L${number}` });
  for (const run of Array.from(code.children)) {
    for (let node = run.firstChild; node; node = node.nextSibling) {
      if (atStart) {
        atStart = false;
        if (node.id !== `code-L${number}`) run.insertBefore(anchor(), node);
      }
      if (node.nodeType !== Node.TEXT_NODE) continue;
      for (let at = node.data.indexOf("\n"); at !== -1; at = node.data.indexOf("\n")) {
        number += 1;
        if (at === node.data.length - 1) { atStart = true; break; }
        node = node.splitText(at + 1);
        run.insertBefore(anchor(), node);
      }
    }
  }
}

// A click on a number in the Code tab's gutter puts that line in the address (#code-L42): a
// link to share. (The numbers are one element, not one link each: the page stays light.)

function setUpLineLinks() {
  const view = document.querySelector(".code-view");
  if (!view) return;
  // The line at a height on the screen: the last whose anchor starts above it (a binary search).
  const lineAt = (y) => {
    let low = 1, high = view.querySelectorAll("b[id^='code-L']").length;
    if (!high) return 0;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      const anchor = document.getElementById(`code-L${middle}`);
      if (anchor.getBoundingClientRect().top - 2 <= y) low = middle;  // its line box starts ~2 px above
      else high = middle - 1;
    }
    const first = document.getElementById("code-L1").getBoundingClientRect();
    return low === 1 && y < first.top - 4 ? 0 : low;
  };
  view.addEventListener("mousedown", (event) => {
    const gutter = event.target.closest && event.target.closest(".gutter");
    if (!gutter || event.button !== 0) return;
    event.preventDefault();  // the line where the press was, before a focus could move the page
    const number = lineAt(event.clientY);
    if (number) location.hash = `code-L${number}`;
  });
  view.addEventListener("mousemove", (event) => {
    const gutter = event.target.closest && event.target.closest(".gutter");
    const number = gutter ? lineAt(event.clientY) : 0;
    if (number) gutter.title = t("line_link", { n: number });
  });
}

// The parts that look elements up come before the tabs, which park the hidden panels.
addLineAnchors();
buildSplitViews();
setUpWrappedViews();
setUpCopyButtons(document);
setUpContents();
setUpSearch();
setUpLanguageSwitch();
setUpPlayer();
setUpScrollingBlocks();
setUpSplitScrolling();
setUpDiffSwitches();
setUpComparePicker();
setUpMenu();
setUpSearchShortcut();
setUpLineLinks();
setUpTabs();
setUpStickyBars();
setUpFocusBelowBars();
setUpWhereYouAre();
document.documentElement.classList.add("ready");  // (site.css waits for it; see there)
