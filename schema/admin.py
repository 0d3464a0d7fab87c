"""The admin API of the Discours backend's 2025-08 schema (`admin.graphql`): the settings store,
moderation of shouts and reactions, topics, and the audit trail (an addition: `adminGetAuditLog`)."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

from resolvers import admin, audit, moderation, topic_admin
from resolvers.errors import BadInput
from schema.context import Info, Soon
from schema.engine.execution import DIRECT
from schema.enums import ReactionKind
from schema.inputs import AdminTopicInput, MediaItemInput, TopicMergeInput, as_dict
from schema.types import Author, Authored, Edited, Stat, Topic, load_authors, shout_stat, topics_of_shout


@strawberry.type
class OperationResult:
    success: bool
    error: str | None = None


@strawberry.type
class Paged:
    """What the admin API's lists answer beside their items (Discours' names): the total, the page (from 1),
    its size and how many pages."""

    total: int
    page: int
    perPage: int  # the contract's names
    totalPages: int


@strawberry.type
class AdminShoutInfo(Edited):
    """A shout in any state (published, unpublished, deleted), as moderators see it."""

    id: int
    title: str
    slug: str
    body: str
    layout: str
    lang: str
    created_at: int
    lead: str | None = None
    subtitle: str | None = None
    cover: str | None = None
    cover_caption: str | None = None
    seo: str | None = None
    updated_at: int | None = None
    published_at: int | None = None
    featured_at: int | None = None
    deleted_at: int | None = None
    version_of: int | None = None
    draft: int | None = None
    data: strawberry.Private[dict[str, Any] | None] = None

    @strawberry.field(metadata=DIRECT, graphql_type=list[Author | None] | None)
    def authors(self, info: Info) -> Soon[list[Author | None] | None]:
        return load_authors(info, self._get("author_ids") or [])

    @strawberry.field(metadata=DIRECT, graphql_type=list[Topic | None] | None)
    def topics(self, info: Info) -> Soon[list[Topic | None] | None]:
        return topics_of_shout(info, self.data or {})

    @strawberry.field(metadata=DIRECT, graphql_type=Stat | None)
    def stat(self, info: Info) -> Soon[Stat | None]:
        return shout_stat(info, self.id)


@strawberry.type
class AdminShoutListResponse(Paged):
    shouts: list[AdminShoutInfo]


# Unset and null differ here: `deleted_at: null` restores, a field left out stays as it is.
@strawberry.input
class AdminShoutUpdateInput:
    id: int
    title: str | None = strawberry.UNSET
    body: str | None = strawberry.UNSET
    lead: str | None = strawberry.UNSET
    subtitle: str | None = strawberry.UNSET
    cover: str | None = strawberry.UNSET
    cover_caption: str | None = strawberry.UNSET
    media: list[MediaItemInput | None] | None = strawberry.UNSET
    seo: str | None = strawberry.UNSET
    published_at: int | None = strawberry.UNSET
    featured_at: int | None = strawberry.UNSET
    deleted_at: int | None = strawberry.UNSET
    topic_ids: list[int] | None = strawberry.field(
        default=strawberry.UNSET, description="The shout's topics, all of them (an addition to the Discours contract).")
    main_topic_id: int | None = strawberry.field(
        default=strawberry.UNSET, description="Its main topic, one of `topic_ids` (an addition to the Discours "
                                              "contract).")


@strawberry.type
class AdminReactionInfo(Authored):
    id: int
    created_at: int
    kind: ReactionKind
    updated_at: int | None = None
    deleted_at: int | None = None
    body: str | None = None
    reply_to: int | None = None
    data: strawberry.Private[dict[str, Any] | None] = None

    @strawberry.field
    def shout(self) -> AdminShoutInfo:
        return admin_shout(self._get("shout_data") or {})

    @strawberry.field
    def stat(self) -> Stat | None:
        return None


@strawberry.type
class AdminReactionListResponse(Paged):
    reactions: list[AdminReactionInfo]


@strawberry.input
class AdminReactionUpdateInput:
    id: int
    body: str | None = strawberry.UNSET
    deleted_at: int | None = strawberry.UNSET


@strawberry.type
class AdminTopicResult:
    success: bool
    error: str | None = None
    topic: Topic | None = None


@strawberry.type(description="One administrative write: who (`actor`, an author's id), when, what (`action` on "
                             "`entity` `entity_id`) and the values it changed, before and after.")
class AuditEntry:
    id: int
    created_at: int
    action: str
    entity: str
    entity_id: str
    actor: int | None = None
    community: int | None = None
    before: JSON | None = None
    after: JSON | None = None


@strawberry.type
class AuditLogResponse(Paged):
    entries: list[AuditEntry]


def admin_shout(data: dict[str, Any]) -> AdminShoutInfo:
    shown = AdminShoutInfo.of({**data, "body": data.get("body") or "", "lang": data.get("lang") or "ru",
                               "layout": data.get("layout") or "article"})
    assert shown is not None
    return shown


def _admin_reaction(data: dict[str, Any]) -> AdminReactionInfo:
    shown = AdminReactionInfo.of({**data, "kind": ReactionKind(data["kind"])})
    assert shown is not None
    shown.data = data
    return shown


def _explicit(value: Any) -> dict[str, Any]:
    """An input's fields as given, nulls kept (`deleted_at: null` restores), unset ones left out."""
    return {k: as_dict(v) for k, v in vars(value).items() if v is not strawberry.UNSET}


@strawberry.type
class EnvVariable:
    key: str
    value: str
    type: str
    description: str | None = None
    isSecret: bool | None = None


@strawberry.type
class EnvSection:
    name: str
    variables: list[EnvVariable]
    description: str | None = None


@strawberry.input
class EnvVariableInput:
    key: str
    value: str
    type: str | None = None


@strawberry.type
class AdminQuery:
    @strawberry.field(name="adminGetShouts")
    async def admin_get_shouts(self, info: Info, limit: int | None = None, offset: int | None = None,
                               search: str | None = None, status: str | None = None,
                               community: int | None = None) -> AdminShoutListResponse:
        found = await moderation.admin_get_shouts(info.context.deps, await info.context.viewer(), limit, offset,
                                                  search, status, community)
        return AdminShoutListResponse(shouts=[admin_shout(s) for s in found.pop("shouts")], **found)

    @strawberry.field(name="adminGetReactions")
    async def admin_get_reactions(self, info: Info, limit: int | None = None, offset: int | None = None,
                                  search: str | None = None, kind: ReactionKind | None = None,
                                  shout_id: int | None = None, status: str | None = None,
                                  community: int | None = None) -> AdminReactionListResponse:
        found = await moderation.admin_get_reactions(info.context.deps, await info.context.viewer(), limit, offset,
                                                     search, as_dict(kind), shout_id, status, community)
        return AdminReactionListResponse(reactions=[_admin_reaction(r) for r in found.pop("reactions")], **found)

    @strawberry.field(name="adminGetTopics")
    async def admin_get_topics(self, info: Info, community_id: int) -> list[Topic]:
        found = await topic_admin.admin_get_topics(info.context.deps, await info.context.viewer(), community_id)
        return [t for t in (Topic.of(row) for row in found) if t is not None]

    @strawberry.field(name="adminGetAuditLog", description="The audit trail, newest first (an addition to the "
                      "Discours contract): administrators of a community read its entries.")
    async def admin_get_audit_log(self, info: Info, limit: int | None = None, offset: int | None = None,
                                  entity: str | None = None, entity_id: str | None = None,
                                  action: str | None = None, actor: int | None = None,
                                  community: int | None = None) -> AuditLogResponse:
        found = await audit.audit_log(info.context.deps, await info.context.viewer(), limit, offset, entity=entity,
                                      entity_id=entity_id, action=action, actor=actor, community=community)
        return AuditLogResponse(entries=[AuditEntry(**e) for e in found.pop("entries")], **found)

    @strawberry.field(name="getEnvVariables")
    async def get_env_variables(self, info: Info) -> list[EnvSection]:
        sections = await admin.get_env_variables(info.context.deps, await info.context.viewer())
        return [EnvSection(name=s["name"], description=s["description"],
                           variables=[EnvVariable(**v) for v in s["variables"]]) for s in sections]


@strawberry.type
class AdminMutation:
    @strawberry.mutation(name="adminUpdateShout")
    async def admin_update_shout(self, info: Info, shout: AdminShoutUpdateInput) -> OperationResult:
        viewer = await info.context.viewer()
        await moderation.admin_update_shout(info.context.deps, viewer, _explicit(shout))
        return OperationResult(success=True)

    @strawberry.mutation(name="adminDeleteShout")
    async def admin_delete_shout(self, info: Info, id: int) -> OperationResult:
        viewer = await info.context.viewer()
        await moderation.admin_delete_shout(info.context.deps, viewer, id, restore=False)
        return OperationResult(success=True)

    @strawberry.mutation(name="adminRestoreShout")
    async def admin_restore_shout(self, info: Info, id: int) -> OperationResult:
        viewer = await info.context.viewer()
        await moderation.admin_delete_shout(info.context.deps, viewer, id, restore=True)
        return OperationResult(success=True)

    @strawberry.mutation(name="adminUpdateReaction")
    async def admin_update_reaction(self, info: Info, reaction: AdminReactionUpdateInput) -> OperationResult:
        viewer = await info.context.viewer()
        await moderation.admin_update_reaction(info.context.deps, viewer, _explicit(reaction))
        return OperationResult(success=True)

    @strawberry.mutation(name="adminDeleteReaction")
    async def admin_delete_reaction(self, info: Info, reaction_id: int) -> OperationResult:
        viewer = await info.context.viewer()
        await moderation.admin_delete_reaction(info.context.deps, viewer, reaction_id, restore=False)
        return OperationResult(success=True)

    @strawberry.mutation(name="adminRestoreReaction")
    async def admin_restore_reaction(self, info: Info, reaction_id: int) -> OperationResult:
        viewer = await info.context.viewer()
        await moderation.admin_delete_reaction(info.context.deps, viewer, reaction_id, restore=True)
        return OperationResult(success=True)

    @strawberry.mutation(name="adminCreateTopic")
    async def admin_create_topic(self, info: Info, topic: AdminTopicInput) -> AdminTopicResult:
        values = as_dict(topic)
        values.pop("id", None)  # the contract's input requires one; a new topic takes the next
        if "slug" not in values:
            raise BadInput("a new topic needs a slug", field="slug")
        made = await topic_admin.create_topic(info.context.deps, await info.context.viewer(), values)
        return AdminTopicResult(success=True, topic=Topic.of(made["topic"]))

    @strawberry.mutation(name="adminUpdateTopic")
    async def admin_update_topic(self, info: Info, topic: AdminTopicInput) -> AdminTopicResult:
        done = await topic_admin.update_topic(info.context.deps, await info.context.viewer(), as_dict(topic))
        return AdminTopicResult(success=True, topic=Topic.of(done["topic"]))

    @strawberry.mutation(name="adminMergeTopics")
    async def admin_merge_topics(self, info: Info, merge_input: TopicMergeInput) -> AdminTopicResult:
        done = await topic_admin.merge_topics(info.context.deps, await info.context.viewer(), as_dict(merge_input))
        return AdminTopicResult(success=True, topic=Topic.of(done["topic"]))

    # Two forms: Discours' panel sends `key` and `value`, its 2025-08 schema declares `variable`; one of the
    # two is required, and the answer stays the Boolean the panel reads.
    @strawberry.mutation(name="updateEnvVariable")
    async def update_env_variable(self, info: Info, key: str | None = None, value: str | None = None,
                                  variable: EnvVariableInput | None = None) -> bool:
        if variable is not None and key is None and value is None:
            key, value = variable.key, variable.value
        elif variable is not None or key is None or value is None:
            raise BadInput("give either key and value, or variable", field="variable" if key is None else "key")
        return await admin.update_env_variables(info.context.deps, await info.context.viewer(), {key: value})

    @strawberry.mutation(name="updateEnvVariables")
    async def update_env_variables(self, info: Info, variables: list[EnvVariableInput]) -> bool:
        items = {v.key: v.value for v in variables}
        return await admin.update_env_variables(info.context.deps, await info.context.viewer(), items)
