// The moderation queue: the newest comments and reactions with their shout and author, filtered by community,
// shout, kind, status and text; hide and restore in one action (confirmed first); new comments appear
// without a reload (the live events of the communities this person moderates, /connect).
import { act, gql } from "../api.js";
import { t, when } from "../i18n.js";
import { confirmed, field, h, pagedTable, prefill, running, say, select } from "../ui.js";

const KINDS = ["COMMENT", "QUOTE", "LIKE", "DISLIKE", "AGREE", "DISAGREE", "ASK", "PROPOSE", "PROOF", "DISPROOF",
               "ACCEPT", "REJECT"];
const LIST = `query($limit: Int, $offset: Int, $search: String, $kind: ReactionKind, $shout: Int, $status: String,
  $community: Int) { adminGetReactions(limit: $limit, offset: $offset, search: $search, kind: $kind, shout_id: $shout,
  status: $status, community: $community) { total reactions { id kind body created_at deleted_at
  created_by { name slug } shout { id slug title } } } }`;
const HIDE = "mutation($id: Int!) { adminDeleteReaction(reaction_id: $id) { success error } }";
const RESTORE = "mutation($id: Int!) { adminRestoreReaction(reaction_id: $id) { success error } }";

export async function moderationPage(main, session) {
  const filters = h("form", { class: "filters", role: "search" },
    field(t("community"), select("community", [["", t("all")], ...session.communities.map((c) => [String(c.id), c.name])])),
    field(t("kind"), select("kind", [["", t("all")], ...KINDS.map((k) => [k, k])])),
    // all by default: what was just hidden stays in view, struck through, with its Restore
    field(t("status"), select("status", [["all", t("all")], ["active", t("active")], ["deleted", t("deleted")]])),
    field(t("shout"), h("input", { name: "shout", type: "number", min: 1, size: 6 })),
    field(t("text"), h("input", { name: "search", type: "search" })),
    h("button", { type: "submit" }, t("apply")));
  prefill(filters);
  const fresh = h("p", { class: "muted", "aria-live": "polite" }, t("moderation.live"));
  let arrived = 0;
  const newest = new Set();

  function asked() {
    const data = new FormData(filters);
    const number = (name) => (data.get(name) ? Number(data.get(name)) : null);
    return { search: data.get("search") || null, kind: data.get("kind") || null, shout: number("shout"),
             status: data.get("status") || null, community: number("community") };
  }

  async function change(reaction, hide) {
    const label = `${hide ? t("hide") : t("restore")} #${reaction.id}`;
    if (hide && !(await confirmed(t("confirm.hide", { author: reaction.created_by.name }), t("hide")))) return;
    await running(label, () => act(hide ? HIDE : RESTORE, { id: reaction.id },
                                   hide ? "adminDeleteReaction" : "adminRestoreReaction")).catch(() => null);
    await table.reload();
  }

  function row(reaction) {
    const hidden = reaction.deleted_at !== null;
    const action = hidden
      ? h("button", { type: "button", onclick: () => change(reaction, false) }, t("restore"))
      : h("button", { type: "button", class: "danger", onclick: () => change(reaction, true) }, t("hide"));
    return h("tr", { class: [hidden ? "deleted" : "", newest.has(reaction.id) ? "fresh" : ""].join(" ").trim() || null,
                     dataset: { reaction: reaction.id }, tabindex: 0,
                     onkeydown: (event) => {  // on a focused row: h hides, r restores
                       if (event.target !== event.currentTarget) return;
                       if (event.key === "h" && !hidden) change(reaction, true);
                       if (event.key === "r" && hidden) change(reaction, false);
                     } },
      h("td", {}, when(reaction.created_at)), h("td", {}, reaction.created_by.name),
      h("td", {}, reaction.shout.title, h("br"), h("span", { class: "muted" }, `#${reaction.shout.id}`)),
      h("td", {}, reaction.kind), h("td", { class: "body" }, (reaction.body || "").replace(/<[^>]+>/g, " ").trim()),
      h("td", {}, hidden ? t("deleted") : t("active")), h("td", {}, action));
  }

  const table = pagedTable({
    columns: [t("when"), t("author"), t("shout"), t("kind"), t("text"), t("status"), t("actions")],
    load: async (limit, offset) => {
      const found = (await gql(LIST, { limit, offset, ...asked() })).adminGetReactions;
      return { total: found.total, items: found.reactions };
    },
    row,
  });
  filters.addEventListener("submit", (event) => { event.preventDefault(); table.reload(true); });

  function onLive(event) {
    if (event.detail.entity !== "reaction" || event.detail.action !== "create") return;
    const id = (event.detail.payload.reaction || {}).id;
    if (id) newest.add(id);
    arrived += 1;
    fresh.textContent = t("moderation.new", { n: arrived });
    say(fresh.textContent);
    table.reload();
  }
  document.addEventListener("live", onLive);
  window.addEventListener("hashchange", () => document.removeEventListener("live", onLive), { once: true });

  main.replaceChildren(h("h1", {}, t("moderation.title")), filters, fresh, table.element);
  await table.reload();
}
