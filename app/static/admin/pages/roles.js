// A community's roles: which it gives to who joins and which it offers, and its own roles with what each
// may do (created and removed here; the built-in ones are the platform's).
import { act, gql } from "../api.js";
import { t } from "../i18n.js";
import { confirmed, failure, field, h, running, select } from "../ui.js";

const BUILT_IN = new Set(["reader", "author", "artist", "expert", "editor", "admin"]);
const ROLES = "query($c: Int) { adminGetRoles(community: $c) { id name description } }";
const SETTINGS = `query($c: Int!) { adminGetCommunityRoleSettings(community_id: $c) { default_roles available_roles } }`;
const SAVE = `mutation($c: Int!, $d: [String!]!, $a: [String!]!) { adminUpdateCommunityRoleSettings(community_id: $c,
  default_roles: $d, available_roles: $a) { success error } }`;
const CREATE = `mutation($r: CustomRoleInput!) { adminCreateCustomRole(role: $r) { success error } }`;
const DELETE = `mutation($r: String!, $c: Int!) { adminDeleteCustomRole(role_id: $r, community_id: $c) { success error } }`;

export async function rolesPage(main, session) {
  let community = session.communities[0].id;
  const chooser = select("community", session.communities.map((c) => [String(c.id), c.name]), String(community));
  const body = h("div");

  // a community this person does not administer says so, and another can be chosen
  const load = () => show().catch((error) => body.replaceChildren(failure(error)));

  async function show() {
    const [roles, settings] = await Promise.all([gql(ROLES, { c: community }).then((d) => d.adminGetRoles || []),
      gql(SETTINGS, { c: community }).then((d) => d.adminGetCommunityRoleSettings)]);
    const boxes = (name, chosen) => h("fieldset", {}, h("legend", {}, t(`roles.${name}`)), roles.map((role) =>
      h("label", { class: "row" }, h("input", { type: "checkbox", name, value: role.id, checked: chosen.includes(role.id) }),
        role.name)));
    const form = h("form", { class: "card", onsubmit: async (event) => {
      event.preventDefault();
      const picked = (name) => [...form.querySelectorAll(`input[name=${name}]:checked`)].map((box) => box.value);
      if (!(await confirmed(t("confirm.roleSettings"), t("save")))) return;
      await running(t("save"), () => act(SAVE, { c: community, d: picked("default"), a: picked("offered") },
                                         "adminUpdateCommunityRoleSettings")).catch(() => null);
      await load();
    } }, boxes("default", settings.default_roles), boxes("offered", settings.available_roles),
    h("button", { type: "submit", class: "primary" }, t("save")));
    const own = roles.filter((role) => !BUILT_IN.has(role.id));
    const create = h("form", { class: "filters", onsubmit: async (event) => {
      event.preventDefault();
      const data = new FormData(create);
      const permissions = String(data.get("permissions") || "").split(/[\s,]+/).filter(Boolean);
      await running(t("roles.create"), () => act(CREATE, { r: { id: data.get("id"), name: data.get("name"),
        community_id: community, permissions } }, "adminCreateCustomRole")).catch(() => null);
      await load();
    } }, field(t("roles.id"), h("input", { name: "id", required: true, pattern: "[a-z0-9_-]+" })),
    field(t("roles.name"), h("input", { name: "name", required: true })),
    field(t("roles.permissions"), h("input", { name: "permissions", placeholder: "shout:read, reaction:create" })),
    h("button", { type: "submit" }, t("roles.create")));
    body.replaceChildren(form, h("h2", {}, t("roles.own")), own.length ? h("ul", {}, own.map((role) =>
      h("li", { dataset: { role: role.id } }, `${role.name} (${role.id}) `, h("button", { type: "button", class: "danger",
        onclick: async () => {
          if (!(await confirmed(t("confirm.role", { name: role.name }), t("delete")))) return;
          await running(t("delete"), () => act(DELETE, { r: role.id, c: community }, "adminDeleteCustomRole"))
            .catch(() => null);
          await load();
        } }, t("delete"))))) : h("p", { class: "muted" }, t("none")), create);
  }

  chooser.addEventListener("change", () => { community = Number(chooser.value); load(); });
  main.replaceChildren(h("h1", {}, t("nav.roles")), h("div", { class: "filters" }, field(t("community"), chooser)), body);
  await load();
}
