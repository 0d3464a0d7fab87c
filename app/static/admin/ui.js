// What every page is made of: elements, a paged table with its total, a confirmation that says what will
// happen, the status line, and errors shown in words with their code.
import { t } from "./i18n.js";

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function say(text) {
  document.getElementById("status").textContent = text;
}

export function failure(error) {
  return h("p", { class: "error", role: "alert" }, `${t("error")}: ${error.message} (${error.code || "ERROR"})`);
}

// Ask before anything that destroys: the dialog says what will happen; Enter confirms, Escape cancels.
export function confirmed(text, action) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-no").textContent = t("cancel");
  document.getElementById("confirm-yes").textContent = action;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
    document.getElementById("confirm-yes").focus();
  });
}

// Run a long or destructive operation: the status says it is running, then its result or its error.
export async function running(label, work) {
  say(`${label}: ${t("working")}`);
  document.body.classList.add("busy");
  try {
    const result = await work();
    say(`${label}: ${t("done")}`);
    return result;
  } catch (error) {
    say(`${label}: ${t("error")}: ${error.message} (${error.code || "ERROR"})`);
    throw error;
  } finally {
    document.body.classList.remove("busy");
  }
}

// A page of a list with its total: `load(limit, offset)` answers {total, items}; `row(item)` makes a <tr>.
export function pagedTable({ columns, load, row, size = 20 }) {
  const body = h("tbody");
  const info = h("span");
  const previous = h("button", { type: "button" }, t("prev"));
  const next = h("button", { type: "button" }, t("next"));
  const table = h("table", {}, h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))), body);
  const box = h("div", {}, table, h("nav", { class: "pager", "aria-label": "pages" }, previous, info, next));
  let offset = 0;
  let total = 0;
  async function show() {
    body.replaceChildren(h("tr", {}, h("td", { colspan: columns.length, class: "busy" }, t("working"))));
    try {
      const page = await load(size, offset);
      total = page.total;
      body.replaceChildren(...(page.items.length ? page.items.map(row)
        : [h("tr", {}, h("td", { colspan: columns.length, class: "muted" }, t("none")))]));
      const pages = Math.max(1, Math.ceil(total / size));
      info.textContent = `${t("total", { n: total })} · ${t("page", { p: offset / size + 1, of: pages })}`;
      previous.disabled = offset === 0;
      next.disabled = offset + size >= total;
    } catch (error) {
      body.replaceChildren(h("tr", {}, h("td", { colspan: columns.length }, failure(error))));
    }
  }
  previous.addEventListener("click", () => { offset = Math.max(0, offset - size); show(); });
  next.addEventListener("click", () => { offset += size; show(); });
  return { element: box, body, reload: (fromStart = false) => { if (fromStart) offset = 0; return show(); } };
}

export function field(label, control) {
  return h("label", {}, label, control);
}

export function select(name, options, value = "") {
  return h("select", { name }, options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
}

// A page opened from a link (`#/shouts?search=12`, the audit trail's): its filters filled from the address.
export function prefill(form) {
  const wanted = new URLSearchParams(location.hash.split("?")[1] || "");
  for (const [name, value] of wanted) {
    const control = form.elements.namedItem(name);
    if (control) control.value = value;
  }
  return form;
}
