// Invites, collections and the server's changeable settings, as the API offers them.
import { act, ApiError, gql } from "../api.js";
import { t, when } from "../i18n.js";
import { confirmed, field, h, pagedTable, running, select } from "../ui.js";

const INVITES = `query($limit: Int, $offset: Int, $search: String, $status: String) { adminGetInvites(limit: $limit,
  offset: $offset, search: $search, status: $status) { total invites { inviter_id author_id shout_id status created_at
  inviter { name } author { name } shout { title } } } }`;
const INVITE_STATUS = `mutation($i: AdminInviteUpdateInput!) { adminUpdateInvite(invite: $i) { success error } }`;
const INVITE_DELETE = `mutation($i: Int!, $a: Int!, $s: Int!) { adminDeleteInvite(inviter_id: $i, author_id: $a,
  shout_id: $s) { success error } }`;
const COLLECTIONS = "{ get_collections_all { id slug title amount published_at created_by { name } } }";
const COLLECTION_DELETE = "mutation($s: String!) { delete_collection(slug: $s) { error } }";
const SETTINGS = "{ getEnvVariables { name description variables { key value type description isSecret } } }";
const SETTING = "mutation($k: String, $v: String) { updateEnvVariable(key: $k, value: $v) }";

export async function invitesPage(main) {
  const filters = h("form", { class: "filters", role: "search" },
    field(t("status"), select("status", [["", t("all")], ["PENDING", "PENDING"], ["ACCEPTED", "ACCEPTED"],
                                         ["REJECTED", "REJECTED"]])),
    field(t("search"), h("input", { name: "search", type: "search" })), h("button", { type: "submit" }, t("apply")));
  const table = pagedTable({
    columns: [t("when"), t("invite.from"), t("invite.to"), t("shout"), t("status"), t("actions")],
    load: async (limit, offset) => {
      const data = new FormData(filters);
      const found = (await gql(INVITES, { limit, offset, search: data.get("search") || null,
                                          status: data.get("status") || null })).adminGetInvites;
      return { total: found.total, items: found.invites };
    },
    row: (invite) => {
      const key = { i: invite.inviter_id, a: invite.author_id, s: invite.shout_id };
      const status = select("status", ["PENDING", "ACCEPTED", "REJECTED"].map((s) => [s, s]), invite.status);
      status.addEventListener("change", () => running(t("save"), () => act(INVITE_STATUS, { i: {
        inviter_id: key.i, author_id: key.a, shout_id: key.s, status: status.value } }, "adminUpdateInvite"))
        .catch(() => null).then(() => table.reload()));
      return h("tr", {}, h("td", {}, when(invite.created_at)), h("td", {}, invite.inviter.name),
        h("td", {}, invite.author.name), h("td", {}, invite.shout.title), h("td", {}, status),
        h("td", {}, h("button", { type: "button", class: "danger", onclick: async () => {
          if (await confirmed(t("confirm.invite", { to: invite.author.name, shout: invite.shout.title }), t("delete"))) {
            await running(t("delete"), () => act(INVITE_DELETE, key, "adminDeleteInvite")).catch(() => null);
            await table.reload();
          }
        } }, t("delete"))));
    },
  });
  filters.addEventListener("submit", (event) => { event.preventDefault(); table.reload(true); });
  main.replaceChildren(h("h1", {}, t("nav.invites")), filters, table.element);
  await table.reload();
}

export async function collectionsPage(main) {
  const table = pagedTable({
    columns: [t("title"), t("author"), t("shouts.title"), t("when"), t("actions")],
    load: async (limit, offset) => {
      const all = (await gql(COLLECTIONS)).get_collections_all || [];
      return { total: all.length, items: all.slice(offset, offset + limit) };
    },
    row: (collection) => h("tr", {}, h("td", {}, collection.title, h("br"), h("span", { class: "muted" }, collection.slug)),
      h("td", {}, collection.created_by.name), h("td", {}, collection.amount ?? ""),
      h("td", {}, when(collection.published_at)),
      h("td", {}, h("button", { type: "button", class: "danger", onclick: async () => {
        if (!(await confirmed(t("confirm.collection", { title: collection.title }), t("delete")))) return;
        await running(t("delete"), async () => {
          const answer = (await gql(COLLECTION_DELETE, { s: collection.slug })).delete_collection;
          if (answer.error) throw new ApiError(answer.error, "REFUSED");
        }).catch(() => null);
        await table.reload();
      } }, t("delete")))),
  });
  main.replaceChildren(h("h1", {}, t("nav.collections")), table.element);
  await table.reload();
}

export async function settingsPage(main) {
  const sections = (await gql(SETTINGS)).getEnvVariables;
  const added = h("form", { class: "filters", onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(added);
    if (!(await confirmed(t("confirm.setting", { key: data.get("key") }), t("save")))) return;
    await running(String(data.get("key")), async () => {
      if (!(await gql(SETTING, { k: data.get("key"), v: data.get("value") })).updateEnvVariable) {
        throw new ApiError(String(data.get("key")), "REFUSED");
      }
    }).catch(() => null);
    await settingsPage(main);
  } }, field(t("setting.key"), h("input", { name: "key", required: true })),
  field(t("setting.value"), h("input", { name: "value", required: true })), h("button", { type: "submit" }, t("save")));
  main.replaceChildren(h("h1", {}, t("nav.settings")), sections.length ? null : h("p", { class: "muted" }, t("none")),
    added, ...sections.map((section) => h("section", {},
    h("h2", {}, section.name), section.description ? h("p", { class: "muted" }, section.description) : null,
    section.variables.map((variable) => {
      const input = h("input", { name: variable.key, value: variable.isSecret ? "" : variable.value,
                                 type: variable.isSecret ? "password" : "text", size: 40 });
      return h("form", { class: "filters", onsubmit: async (event) => {
        event.preventDefault();
        if (!(await confirmed(t("confirm.setting", { key: variable.key }), t("save")))) return;
        await running(variable.key, async () => {
          if (!(await gql(SETTING, { k: variable.key, v: input.value })).updateEnvVariable) {
            throw new ApiError(variable.key, "REFUSED");
          }
        }).catch(() => null);
      } }, field(`${variable.key}${variable.description ? ` — ${variable.description}` : ""}`, input),
      h("button", { type: "submit" }, t("save")));
    }))));
}
