// Shouts by status (published, draft, deleted), searched by title, slug, id or text; edit the title and the
// lead, take one off the site, delete and restore (each destructive action confirmed first).
import { act, ApiError, gql } from "../api.js";
import { t, when } from "../i18n.js";
import { confirmed, field, h, pagedTable, prefill, running, select } from "../ui.js";

const LIST = `query($limit: Int, $offset: Int, $search: String, $status: String, $community: Int) {
  adminGetShouts(limit: $limit, offset: $offset, search: $search, status: $status, community: $community) {
  total shouts { id title slug lead published_at deleted_at created_at authors { name } community { id name }
  topics { id } } } }`;
const TOPICS = "query($c: Int!) { adminGetTopics(community_id: $c) { id title } }";
const UPDATE = "mutation($s: AdminShoutUpdateInput!) { adminUpdateShout(shout: $s) { success error } }";
const DELETE = "mutation($id: Int!) { adminDeleteShout(id: $id) { success error } }";
const RESTORE = "mutation($id: Int!) { adminRestoreShout(id: $id) { success error } }";
const UNPUBLISH = "mutation($id: Int!) { unpublish_shout(shout_id: $id) { error } }";

function state(shout) {
  if (shout.deleted_at) return "deleted";
  return shout.published_at ? "published" : "draft";
}

export async function shoutsPage(main, session) {
  const filters = h("form", { class: "filters", role: "search" },
    field(t("status"), select("status", [["all", t("all")], ["published", t("published")], ["draft", t("draft")],
                                         ["deleted", t("status.deleted")]])),
    field(t("community"), select("community", [["", t("all")], ...session.communities.map((c) => [String(c.id), c.name])])),
    field(t("search"), h("input", { name: "search", type: "search" })),
    h("button", { type: "submit" }, t("apply")));
  prefill(filters);
  const editor = h("div");

  function asked() {
    const data = new FormData(filters);
    return { search: data.get("search") || null, status: data.get("status") || null,
             community: data.get("community") ? Number(data.get("community")) : null };
  }

  async function run(label, work) {
    await running(label, work).catch(() => null);
    await table.reload();
  }

  async function edit(shout) {
    const topics = (await gql(TOPICS, { c: shout.community.id })).adminGetTopics;
    const held = new Set((shout.topics || []).map((topic) => topic.id));
    const form = h("form", { class: "card", "aria-label": t("edit"), onsubmit: (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const chosen = data.getAll("topics").map(Number);
      editor.replaceChildren();
      run(`${t("edit")} #${shout.id}`, () => act(UPDATE, { s: { id: shout.id, title: data.get("title"),
        lead: data.get("lead"), topic_ids: chosen } },  // the main topic kept when still chosen
      "adminUpdateShout"));
    } },
    field(t("title"), h("input", { name: "title", value: shout.title, required: true })),
    field(t("lead"), h("textarea", { name: "lead", rows: 3 }, shout.lead || "")),
    field(t("nav.topics"), h("select", { name: "topics", multiple: true, size: 8 }, topics.map((topic) =>
      h("option", { value: topic.id, selected: held.has(topic.id) }, topic.title)))),
    h("div", { class: "row" }, h("button", { class: "primary", type: "submit" }, t("save")),
      h("button", { type: "button", onclick: () => editor.replaceChildren() }, t("cancel"))));
    editor.replaceChildren(form);
    form.querySelector("input").focus();
  }

  function row(shout) {
    const now = state(shout);
    const buttons = [h("button", { type: "button", onclick: () => edit(shout) }, t("edit"))];
    if (now === "published") {
      buttons.push(h("button", { type: "button", onclick: async () => {
        if (await confirmed(t("confirm.unpublish", { title: shout.title }), t("unpublish"))) {
          run(`${t("unpublish")} #${shout.id}`, async () => {
            const answer = (await gql(UNPUBLISH, { id: shout.id })).unpublish_shout;
            if (answer.error) throw new ApiError(answer.error, "REFUSED");
          });
        }
      } }, t("unpublish")));
    }
    buttons.push(now === "deleted"
      ? h("button", { type: "button", onclick: () => run(`${t("restore")} #${shout.id}`,
                                                         () => act(RESTORE, { id: shout.id }, "adminRestoreShout")) },
          t("restore"))
      : h("button", { type: "button", class: "danger", onclick: async () => {
          if (await confirmed(t("confirm.deleteShout", { title: shout.title }), t("delete"))) {
            run(`${t("delete")} #${shout.id}`, () => act(DELETE, { id: shout.id }, "adminDeleteShout"));
          }
        } }, t("delete")));
    return h("tr", { class: now === "deleted" ? "deleted" : null, dataset: { shout: shout.id } },
      h("td", {}, `#${shout.id}`), h("td", {}, shout.title, h("br"), h("span", { class: "muted" }, shout.slug)),
      h("td", {}, (shout.authors || []).map((a) => a.name).join(", ")), h("td", {}, shout.community.name),
      h("td", {}, t(now === "deleted" ? "status.deleted" : now)), h("td", {}, when(shout.published_at || shout.created_at)),
      h("td", {}, h("div", { class: "row" }, buttons)));
  }

  const table = pagedTable({
    columns: ["#", t("title"), t("author"), t("community"), t("status"), t("when"), t("actions")],
    load: async (limit, offset) => {
      const found = (await gql(LIST, { limit, offset, ...asked() })).adminGetShouts;
      return { total: found.total, items: found.shouts };
    },
    row,
  });
  filters.addEventListener("submit", (event) => { event.preventDefault(); table.reload(true); });
  main.replaceChildren(h("h1", {}, t("shouts.title")), filters, editor, table.element);
  await table.reload();
}
