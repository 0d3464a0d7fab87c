// The editors' panel: sign in, check that the person moderates somewhere, then a page per hash route.
// Every action goes through the GraphQL API (api.js), as a script's would.
import { ApiError, gql } from "./api.js";
import { LANGUAGES, lang, setLang, t } from "./i18n.js";
import { failure, h, say } from "./ui.js";
import { moderationPage } from "./pages/moderation.js";
import { shoutsPage } from "./pages/shouts.js";
import { peoplePage } from "./pages/people.js";
import { topicsPage } from "./pages/topics.js";
import { auditPage } from "./pages/audit.js";
import { collectionsPage, invitesPage, settingsPage } from "./pages/more.js";
import { rolesPage } from "./pages/roles.js";

const PAGES = { moderation: moderationPage, shouts: shoutsPage, people: peoplePage, roles: rolesPage, topics: topicsPage,
                invites: invitesPage, collections: collectionsPage, settings: settingsPage, audit: auditPage };
const main = document.getElementById("main");
const top = document.getElementById("top");
export const session = { me: null, communities: [], events: null };

function route() {
  const name = location.hash.replace(/^#\/?/, "").split("?")[0];
  return PAGES[name] ? name : "moderation";
}

function header() {
  const current = route();
  const switcher = h("select", { "aria-label": t("language"), onchange: (e) => { setLang(e.target.value); show(); } },
    LANGUAGES.map((l) => h("option", { value: l, selected: l === lang() }, l.toUpperCase())));
  top.replaceChildren(
    h("span", { class: "brand" }, "Discours"),
    session.me ? h("nav", { "aria-label": "panel" }, Object.keys(PAGES).map((name) =>
      h("a", { href: `#/${name}`, "aria-current": name === current ? "page" : null }, t(`nav.${name}`)))) : null,
    h("span", { class: "who" }, session.me ? session.me.name : null, switcher,
      session.me ? h("button", { type: "button", onclick: signOut }, t("signout")) : null));
}

async function signOut() {
  await gql("mutation { logout { success } }").catch(() => null);
  location.reload();
}

function signIn(error) {
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      const answer = await gql(`mutation($e: String!, $p: String!) { login(email: $e, password: $p) { success error } }`,
        { e: data.get("email"), p: data.get("password") });
      if (!answer.login.success) throw new ApiError(answer.login.error || "refused", "UNAUTHENTICATED");
      await start();
    } catch (failed) {
      signIn(failed);
    }
  } },
  h("label", {}, t("signin.email"), h("input", { name: "email", type: "email", required: true, autocomplete: "username" })),
  h("label", {}, t("signin.password"), h("input", { name: "password", type: "password", required: true,
                                                     autocomplete: "current-password" })),
  h("button", { class: "primary", type: "submit" }, t("signin.button")));
  main.replaceChildren(h("section", { class: "card" }, h("h1", {}, t("signin.title")), error ? failure(error) : null, form));
  header();
  form.querySelector("input").focus();
}

function refused(name) {
  main.replaceChildren(h("section", { class: "card", id: "refused" }, h("h1", {}, t("refused.title")),
    h("p", {}, t("refused.text", { name })), h("button", { type: "button", onclick: signOut }, t("signout"))));
  header();
}

// The live events of the communities this person moderates (and their own), for the pages that show them.
function listen() {
  if (session.events || !window.EventSource) return;
  session.events = new EventSource("/connect", { withCredentials: true });
  session.events.addEventListener("open", () => { document.body.dataset.live = "open"; });
  session.events.addEventListener("error", () => { document.body.dataset.live = "reconnecting"; });
  session.events.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    document.dispatchEvent(new CustomEvent("live", { detail: event }));
  });
}

async function show() {
  header();
  main.replaceChildren();
  try {
    await PAGES[route()](main, session);
  } catch (error) {
    main.replaceChildren(failure(error));
  }
  main.focus({ preventScroll: true });
}

async function start() {
  let me;
  try {
    me = (await gql("{ me { author { id name slug } } }")).me.author;
  } catch (error) {
    if (error.code === "UNAUTHENTICATED") return signIn();
    throw error;
  }
  session.me = me;
  try {
    await gql("{ adminGetReactions(limit: 1) { total } }");
  } catch (error) {
    if (error.code === "FORBIDDEN") return refused(me.name);
    throw error;
  }
  session.communities = (await gql("{ get_communities_all { id name slug } }")).get_communities_all;
  listen();
  await show();
}

window.addEventListener("hashchange", () => session.me && show());
start().catch((error) => { main.replaceChildren(failure(error)); say(error.message); });
