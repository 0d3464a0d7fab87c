// Topics of a community as a tree: create, rename, move under another, and merge several into one, with a
// preview of what moves; a merge says that it is running, then its result.
import { ApiError, gql } from "../api.js";
import { t } from "../i18n.js";
import { confirmed, failure, field, h, running, select } from "../ui.js";

const TOPICS = `query($c: Int!) { adminGetTopics(community_id: $c) { id slug title parent_ids
  stat { shouts followers } } }`;
const CREATE = `mutation($t: AdminTopicInput!) { adminCreateTopic(topic: $t) { success error topic { id } } }`;
const UPDATE = `mutation($t: AdminTopicInput!) { adminUpdateTopic(topic: $t) { success error } }`;
const MERGE = `mutation($m: TopicMergeInput!) { adminMergeTopics(merge_input: $m) { success error topic { id stat { shouts followers } } } }`;
// The same merge as a dry run: what it would move, nothing changed.
const PREVIEW = `mutation($m: TopicMergeInput!) { merge_topics(merge_input: $m) { error stats } }`;

async function must(query, variables, name) {
  const answer = (await gql(query, variables))[name];
  if (!answer.success) throw new ApiError(answer.error || "refused", "REFUSED");
  return answer;
}

export async function topicsPage(main, session) {
  let community = session.communities[0].id;
  const chooser = select("community", session.communities.map((c) => [String(c.id), c.name]), String(community));
  const tree = h("div", { class: "tree" });
  const side = h("div");

  async function load() {
    let topics;
    try {
      topics = (await gql(TOPICS, { c: community })).adminGetTopics;
    } catch (error) {  // a community this person does not edit says so, and another can be chosen
      tree.replaceChildren(failure(error));
      return [];
    }
    const byParent = new Map();
    for (const topic of topics) {
      const parent = (topic.parent_ids || [])[0] ?? 0;
      if (!byParent.has(parent)) byParent.set(parent, []);
      byParent.get(parent).push(topic);
    }
    const known = new Set(topics.map((topic) => topic.id));
    const roots = topics.filter((topic) => !known.has((topic.parent_ids || [])[0]));
    const branch = (list) => h("ul", {}, list.map((topic) => h("li", { dataset: { topic: topic.id } },
      h("span", { class: "row" }, h("input", { type: "checkbox", name: "merge", value: topic.id,
                                               "aria-label": `${t("topics.merge")}: ${topic.title}` }),
        h("button", { type: "button", onclick: () => edit(topic, topics) }, topic.title),
        h("span", { class: "muted" }, `${topic.slug} · ${t("topics.counts", topic.stat)}`)),
      byParent.has(topic.id) ? branch(byParent.get(topic.id)) : null)));
    tree.replaceChildren(branch(roots));
    return topics;
  }

  function edit(topic, topics) {
    const parents = [["", t("topics.top")], ...topics.filter((x) => x.id !== topic.id).map((x) => [String(x.id), x.title])];
    const form = h("form", { class: "card", onsubmit: async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const parent = data.get("parent");
      await running(`${t("edit")}: ${topic.title}`, () => must(UPDATE, { t: { id: topic.id, title: data.get("title"),
        parent_ids: parent ? [Number(parent)] : [] } }, "adminUpdateTopic")).catch(() => null);
      await load();
    } },
    h("h2", {}, topic.title), field(t("title"), h("input", { name: "title", value: topic.title, required: true })),
    field(t("topics.parent"), select("parent", parents, String((topic.parent_ids || [])[0] ?? ""))),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, t("save")),
      h("button", { type: "button", onclick: () => merge(topic, topics) }, t("topics.merge"))));
    side.replaceChildren(form);
    form.querySelector("input").focus();
  }

  async function merge(target, topics) {
    const sources = [...tree.querySelectorAll("input[name=merge]:checked")].map((box) => Number(box.value))
      .filter((id) => id !== target.id);
    if (!sources.length) return;
    const chosen = topics.filter((topic) => sources.includes(topic.id));
    const merge = { target_topic_id: target.id, source_topic_ids: sources };
    const preview = (await gql(PREVIEW, { m: { ...merge, dry_run: true } })).merge_topics;
    if (preview.error) throw new ApiError(preview.error, "REFUSED");
    const moving = JSON.parse(preview.stats);
    const text = t("confirm.merge", { sources: chosen.map((topic) => `«${topic.title}»`).join(", "), target: target.title,
                                      followers: moving.followers_moved, shouts: moving.publications_moved,
                                      drafts: moving.drafts_moved });
    if (!(await confirmed(text, t("topics.merge")))) return;
    await running(`${t("topics.merge")}: ${target.title}`, () => must(MERGE, { m: merge }, "adminMergeTopics"))
      .catch(() => null);
    side.replaceChildren();
    await load();
  }

  const create = h("form", { class: "filters", onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(create);
    await running(t("topics.create"), () => must(CREATE, { t: { id: 0, community, slug: data.get("slug"),
                                                                title: data.get("title") } }, "adminCreateTopic"))
      .catch(() => null);
    create.reset();
    await load();
  } },
  field(t("topics.slug"), h("input", { name: "slug", required: true, pattern: "[a-z0-9-]+" })),
  field(t("title"), h("input", { name: "title", required: true })), h("button", { type: "submit" }, t("topics.create")));
  chooser.addEventListener("change", () => { community = Number(chooser.value); side.replaceChildren(); load(); });
  main.replaceChildren(h("h1", {}, t("topics.title")), h("div", { class: "filters" }, field(t("community"), chooser)),
                       create, side, tree);
  await load();
}
