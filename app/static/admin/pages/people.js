// People: search them, see and set their roles in each community (confirmed first).
import { act, gql } from "../api.js";
import { t, when } from "../i18n.js";
import { confirmed, field, h, pagedTable, prefill, running, select } from "../ui.js";

const LIST = `query($limit: Int, $offset: Int, $search: String) { adminGetUsers(limit: $limit, offset: $offset,
  search: $search) { total authors { id name slug email roles last_seen } } }`;
const ROLES = "query($c: Int) { adminGetRoles(community: $c) { id name } }";
const HELD = `query($a: Int!, $c: Int!) { adminGetUserCommunityRoles(author_id: $a, community_id: $c) { roles } }`;
const SET = `mutation($a: Int!, $c: Int!, $r: [String!]!) { adminSetUserCommunityRoles(author_id: $a, community_id: $c,
  roles: $r) { success error } }`;

export async function peoplePage(main, session) {
  const filters = h("form", { class: "filters", role: "search" },
    field(t("search"), h("input", { name: "search", type: "search" })), h("button", { type: "submit" }, t("apply")));
  prefill(filters);
  const roles = h("div");

  async function showRoles(person, communityId) {
    const community = session.communities.find((c) => c.id === communityId) || session.communities[0];
    const [offered, held] = await Promise.all([
      gql(ROLES, { c: community.id }).then((d) => d.adminGetRoles || []),
      gql(HELD, { a: person.id, c: community.id }).then((d) => d.adminGetUserCommunityRoles.roles),
    ]);
    const chooser = select("community", session.communities.map((c) => [String(c.id), c.name]), String(community.id));
    chooser.addEventListener("change", () => showRoles(person, Number(chooser.value)));
    const form = h("form", { class: "card", onsubmit: async (event) => {
      event.preventDefault();
      const chosen = [...form.querySelectorAll("input[name=role]:checked")].map((box) => box.value);
      const text = t("confirm.roles", { name: person.name, community: community.name, roles: chosen.join(", ") || "—" });
      if (!(await confirmed(text, t("roles.set")))) return;
      await running(`${t("roles.set")}: ${person.name}`, () => act(SET, { a: person.id, c: community.id, r: chosen },
                                                                    "adminSetUserCommunityRoles")).catch(() => null);
      await showRoles(person, community.id);
    } },
    h("h2", {}, person.name), field(t("roles.in"), chooser),
    h("fieldset", {}, h("legend", {}, t("roles")), offered.map((role) => h("label", { class: "row" },
      h("input", { type: "checkbox", name: "role", value: role.id, checked: held.includes(role.id) }), role.name))),
    h("button", { type: "submit", class: "primary" }, t("roles.set")));
    roles.replaceChildren(form);
  }

  const table = pagedTable({
    columns: ["#", t("author"), t("email"), t("roles"), t("when"), t("actions")],
    load: async (limit, offset) => {
      const search = new FormData(filters).get("search") || null;
      const found = (await gql(LIST, { limit, offset, search })).adminGetUsers;
      return { total: found.total, items: found.authors };
    },
    row: (person) => h("tr", { dataset: { author: person.id } }, h("td", {}, `#${person.id}`),
      h("td", {}, person.name, h("br"), h("span", { class: "muted" }, person.slug)), h("td", {}, person.email || ""),
      h("td", {}, (person.roles || []).join(", ")), h("td", {}, when(person.last_seen)),
      h("td", {}, h("button", { type: "button", onclick: () => showRoles(person, session.communities[0].id) },
                    t("roles.set")))),
  });
  filters.addEventListener("submit", (event) => { event.preventDefault(); table.reload(true); });
  main.replaceChildren(h("h1", {}, t("people.title")), filters, roles, table.element);
  await table.reload();
}
