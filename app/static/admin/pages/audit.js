// The audit trail: who did what and when, filterable; each entry links to what it changed.
import { gql } from "../api.js";
import { t, when } from "../i18n.js";
import { field, h, pagedTable, select } from "../ui.js";

const LIST = `query($limit: Int, $offset: Int, $entity: String) { adminGetAuditLog(limit: $limit, offset: $offset,
  entity: $entity) { total entries { id created_at action entity entity_id actor community before after } } }`;
const PAGE_OF = { shout: "shouts", reaction: "moderation", topic: "topics", author: "people" };
// Where an entry leads: the page of what it changed, found by its id.
function link(entry) {
  const page = PAGE_OF[entry.entity] || "audit";
  return page === "topics" || page === "audit" ? `#/${page}` : `#/${page}?search=${encodeURIComponent(entry.entity_id)}`;
}

export async function auditPage(main) {
  const filters = h("form", { class: "filters", role: "search" },
    field(t("audit.entity"), select("entity", [["", t("all")], ...Object.keys(PAGE_OF).map((e) => [e, e])])),
    h("button", { type: "submit" }, t("apply")));
  const table = pagedTable({
    columns: [t("when"), t("audit.actor"), t("audit.action"), t("audit.entity"), t("audit.changed")],
    load: async (limit, offset) => {
      const entity = new FormData(filters).get("entity") || null;
      const found = (await gql(LIST, { limit, offset, entity })).adminGetAuditLog;
      return { total: found.total, items: found.entries };
    },
    row: (entry) => h("tr", { dataset: { entry: entry.id } }, h("td", {}, when(entry.created_at)),
      h("td", {}, entry.actor ? `#${entry.actor}` : "—"), h("td", {}, entry.action),
      h("td", {}, h("a", { href: link(entry) }, `${entry.entity} #${entry.entity_id}`)),
      h("td", {}, h("code", {}, JSON.stringify(entry.after ?? entry.before ?? {}).slice(0, 160)))),
  });
  filters.addEventListener("submit", (event) => { event.preventDefault(); table.reload(true); });
  main.replaceChildren(h("h1", {}, t("audit.title")), filters, table.element);
  await table.reload();
}
