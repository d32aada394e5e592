// The little JavaScript of the course site. Every page loads this file; each
// part below sets itself up only if its elements are on the page. Without
// JavaScript every page still reads top to bottom: all panels and views show.
"use strict";

// ---- helpers ---------------------------------------------------------------

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

// ---- chapter tabs: Lesson, Code, Diff, Run ------------------------------------
// The tabs are links to the panels (#lesson, #code, ...). The address decides
// which panel shows, so a tab can be bookmarked and the Back button works.

function setUpTabs() {
  const tabs = Array.from(document.querySelectorAll(".tabs a[href^='#']"));
  const panels = tabs.map((tab) => document.getElementById(tab.hash.slice(1)));
  if (!tabs.length || panels.includes(null)) return;
  let current = panels[0];

  function showPanelFor(hash) {
    const target = hash.length > 1 ? document.getElementById(decodeURIComponent(hash.slice(1))) : null;
    const panel = panels.find((candidate) => target && candidate.contains(target));
    if (panel) current = panel;  // a link to something outside the panels (#main) keeps the panel
    panels.forEach((candidate, index) => {
      candidate.hidden = candidate !== current;
      if (candidate === current) tabs[index].setAttribute("aria-current", "true");
      else tabs[index].removeAttribute("aria-current");
    });
    if (target && target !== current && panel) target.scrollIntoView();
    document.dispatchEvent(new CustomEvent("panelshown", { detail: current.id }));
  }

  window.addEventListener("hashchange", () => showPanelFor(location.hash));
  showPanelFor(location.hash);
}

// ---- diffs: unified or side by side ---------------------------------------------

function setUpDiffSwitches() {
  for (const group of document.querySelectorAll(".view-switch")) {
    const buttons = Array.from(group.querySelectorAll("button[data-view]"));
    const choose = (chosen) => {
      for (const button of buttons) {
        const on = button === chosen;
        button.setAttribute("aria-pressed", String(on));
        document.getElementById(button.dataset.view).hidden = !on;
      }
    };
    buttons.forEach((button) => button.addEventListener("click", () => choose(button)));
    choose(buttons[0]);
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
      message.textContent = "Pick two different chapters.";
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

// "Reminders" are text blocks the harness adds, such as "<reminder>...": they start with "<".
function isReminder(block) {
  return block.type === "text" && typeof block.text === "string" && block.text.trimStart().startsWith("<");
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

function renderBlock(block, isNew, names) {
  const classes = ["block", block.type];
  const tags = [];
  if (isNew) { classes.push("new"); tags.push("new"); }
  if (isReminder(block)) { classes.push("reminder"); tags.push("reminder"); }
  if (block.is_error) { classes.push("error"); tags.push("is_error"); }
  let heading, body;
  if (block.type === "text") {
    heading = "text";
    body = el("pre", {}, block.text);
  } else if (block.type === "tool_use") {
    heading = `tool_use: ${block.name} (${block.id})`;
    body = el("pre", {}, JSON.stringify(block.input, null, 2));
  } else if (block.type === "tool_result") {
    heading = `tool_result for ${names[block.tool_use_id] || "?"} (${block.tool_use_id})`;
    body = el("pre", {}, resultText(block.content));
  } else {
    heading = block.type;
    body = el("pre", {}, JSON.stringify(block, null, 2));
  }
  const label = el("p", { class: "block-head" }, heading);
  for (const tag of tags) label.append(" ", el("span", { class: `tag ${tag}` }, tag));
  return el("div", { class: classes.join(" ") }, label, body);
}

function renderMessage(message, marks, names) {
  const box = el("div", { class: `message ${message.role}` }, el("p", { class: "role" }, message.role));
  blocksOf(message).forEach((block, k) => box.append(renderBlock(block, marks[k], names)));
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
    toolList.append(index ? ", " : "", el("code", { class: before.includes(name) ? null : "changed" }, name));
  });
  const gone = before.filter((name) => !names.includes(name));
  if (gone.length) toolList.append(el("span", { class: "changed" }, ` (no longer offered: ${gone.join(", ")})`));
  list.append(el("dt", {}, "Tools offered"), toolList);

  // Plan mode shows in the tools: in it, exit_plan_mode is offered and enter_plan_mode is not.
  if (names.includes("enter_plan_mode") || names.includes("exit_plan_mode")) {
    const on = names.includes("exit_plan_mode") && !names.includes("enter_plan_mode");
    list.append(el("dt", {}, "Plan mode"), el("dd", {}, on ? "on (exit_plan_mode is offered, enter_plan_mode is not)" : "off (enter_plan_mode is offered)"));
  }

  const todos = latestTodos(request.messages);
  if (todos) {
    const items = el("ul", { class: "todos" });
    const marks = { completed: "☑", in_progress: "◐", pending: "☐" };
    for (const todo of todos) {
      const status = String(todo.status);
      items.append(el("li", { class: `todo ${status}` },
        el("span", { class: "todo-mark", "aria-hidden": "true" }, marks[status] || "•"),
        ` ${status === "in_progress" && todo.activeForm ? todo.activeForm : todo.content} `,
        el("span", { class: "tag" }, status)));
    }
    list.append(el("dt", {}, "Todo list (the last todo_write that succeeded)"), el("dd", {}, items));
  }

  const systemChanged = previousRequest && JSON.stringify(previousRequest.system) !== JSON.stringify(request.system);
  const system = typeof request.system === "string" ? request.system : JSON.stringify(request.system, null, 2);
  const details = el("details", {}, el("summary", {}, systemChanged ? "System prompt (changed since the last call)" : "System prompt"), el("pre", {}, system));
  list.append(el("dt", {}, "Model and limits"), el("dd", {}, `${request.model}, max_tokens ${request.max_tokens}`));
  list.append(el("dt", {}, "System"), el("dd", {}, details));
  return list;
}

function renderStep(calls, step) {
  const { request, response } = calls[step];
  const previous = step > 0 ? calls[step - 1].request : null;
  const messages = request.messages || [];
  const marks = newBlocks(previous ? previous.messages : null, messages);
  const names = toolNames(messages.concat([{ role: "assistant", content: response.content || [] }]));

  const sent = el("section", { class: "sent", "aria-labelledby": "sent-title" },
    el("h4", { id: "sent-title" }, `Sent: ${messages.length} message${messages.length === 1 ? "" : "s"}`));
  // Messages sent before, unchanged, fold away: what is new stays in view.
  const firstNew = marks.findIndex((blockMarks) => blockMarks.some(Boolean));
  const foldUpTo = firstNew === -1 ? messages.length : firstNew;
  if (foldUpTo > 0) {
    const fold = el("details", { class: "earlier" },
      el("summary", {}, `${foldUpTo} earlier message${foldUpTo === 1 ? "" : "s"}, sent in the last call too`));
    for (let i = 0; i < foldUpTo; i++) fold.append(renderMessage(messages[i], marks[i], names));
    sent.append(fold);
  }
  for (let i = foldUpTo; i < messages.length; i++) sent.append(renderMessage(messages[i], marks[i], names));

  const received = el("section", { class: "received", "aria-labelledby": "received-title" },
    el("h4", { id: "received-title" }, `Received: stop_reason ${response.stop_reason}`),
    renderMessage({ role: "assistant", content: response.content || [] }, (response.content || []).map(() => false), names));

  const state = el("section", { class: "session-state", "aria-labelledby": "state-title" },
    el("h4", { id: "state-title" }, "Session state, as the request shows it"), renderState(request, previous));

  return [sent, received, state];
}

function setUpPlayer() {
  const data = document.getElementById("run-data");
  const view = document.getElementById("step-view");
  if (!data || !view) return;
  const calls = JSON.parse(data.textContent).calls;
  const counter = document.getElementById("step-counter");
  const previousButton = document.getElementById("step-previous");
  const nextButton = document.getElementById("step-next");
  const panel = document.getElementById("run");
  const bars = Array.from(document.querySelectorAll(".chart .bar"));
  let step = 0;

  function go(to) {
    step = Math.max(0, Math.min(calls.length - 1, to));
    counter.textContent = `Step ${step + 1} of ${calls.length}`;
    previousButton.disabled = step === 0;
    nextButton.disabled = step === calls.length - 1;
    view.replaceChildren(...renderStep(calls, step));
    bars.forEach((bar, index) => bar.classList.toggle("current", index === step));
  }

  previousButton.addEventListener("click", () => go(step - 1));
  nextButton.addEventListener("click", () => go(step + 1));
  bars.forEach((bar, index) => bar.addEventListener("click", () => go(index)));
  document.addEventListener("keydown", (event) => {
    if ((panel && panel.hidden) || typingInAField(event)) return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const moves = { ArrowLeft: step - 1, ArrowRight: step + 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    go(moves[event.key]);
  });
  go(0);
}

setUpTabs();
setUpDiffSwitches();
setUpComparePicker();
setUpPlayer();
