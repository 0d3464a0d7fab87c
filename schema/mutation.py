"""The write side of the contract: each mutation unpacks the context and calls one resolver function."""

from __future__ import annotations

from typing import Any

import strawberry

from resolvers import (
    bookmark,
    collection,
    community,
    draft,
    following,
    histories,
    invite,
    notifications,
    rating,
    reaction_write,
    scheduled,
    topic_admin,
)
from resolvers import profile as profiles
from schema.context import Info
from schema.enums import FollowingEntity
from schema.inputs import (
    CollectionInput,
    CommunityInput,
    DraftInput,
    ProfileInput,
    ReactionInput,
    TopicInput,
    TopicMergeInput,
    as_dict,
)
from schema.pages import selected_paths
from schema.results import AuthorFollowsResult, CommonResult, SuccessResult, common
from schema.types import Author, Community, Topic


def _follows(result: dict[str, Any]) -> AuthorFollowsResult:
    return AuthorFollowsResult(
        error=result.get("error"), authors=[Author.of(a) for a in result.get("authors", [])],
        topics=[Topic.of(t) for t in result.get("topics", [])],
        communities=[Community.of(c) for c in result.get("communities", [])])


def _wants(info: Info, *fields: str) -> bool:
    """Whether the client asked the answer for any of `fields`: a write whose answer is asked for its
    `error` only (scripts, many clients after a write) reads nothing to answer with."""
    return not selected_paths(info).isdisjoint(fields)


@strawberry.type
class WriteMutation:
    # --- drafts and publishing ---------------------------------------------------------------------------
    @strawberry.mutation
    async def create_draft(self, info: Info, draft_input: DraftInput) -> CommonResult:
        return common(await draft.create_draft(info.context.deps, await info.context.viewer(), as_dict(draft_input)))

    @strawberry.mutation(description="An editable draft of a published shout, for its authors (the shout's "
                                     "own draft when it has one); publish_draft publishes it back into the shout.")
    async def create_draft_from_shout(self, info: Info, shout_id: int) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await draft.create_draft_from_shout(info.context.deps, viewer, shout_id))

    @strawberry.mutation
    async def update_draft(self, info: Info, draft_id: int, draft_input: DraftInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await draft.update_draft(info.context.deps, viewer, draft_id, as_dict(draft_input)))

    @strawberry.mutation
    async def delete_draft(self, info: Info, draft_id: int) -> CommonResult:
        return common(await draft.delete_draft(info.context.deps, await info.context.viewer(), draft_id))

    @strawberry.mutation
    async def publish_draft(self, info: Info, draft_id: int) -> CommonResult:
        return common(await draft.publish_draft(info.context.deps, await info.context.viewer(), draft_id))

    @strawberry.mutation(description="Publish the draft at `publish_at` (unix seconds, within a year); "
                                     "null unschedules it. The server publishes it when due.")
    async def schedule_draft(self, info: Info, draft_id: int, publish_at: int | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await scheduled.schedule_draft(info.context.deps, viewer, draft_id, publish_at))

    @strawberry.mutation
    async def unpublish_draft(self, info: Info, draft_id: int) -> CommonResult:
        return common(await draft.unpublish_draft(info.context.deps, await info.context.viewer(), draft_id))

    @strawberry.mutation
    async def publish_shout(self, info: Info, shout_id: int) -> CommonResult:
        return common(await draft.publish_shout(info.context.deps, await info.context.viewer(), shout_id))

    @strawberry.mutation
    async def unpublish_shout(self, info: Info, shout_id: int) -> CommonResult:
        return common(await draft.unpublish_shout(info.context.deps, await info.context.viewer(), shout_id))

    # --- reactions and ratings ---------------------------------------------------------------------------
    @strawberry.mutation
    async def create_reaction(self, info: Info, reaction: ReactionInput) -> CommonResult:
        return common(await reaction_write.create_reaction(info.context.deps, info.context, as_dict(reaction)))

    @strawberry.mutation
    async def update_reaction(self, info: Info, reaction: ReactionInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await reaction_write.update_reaction(info.context.deps, viewer, as_dict(reaction)))

    @strawberry.mutation
    async def delete_reaction(self, info: Info, reaction_id: int) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await reaction_write.delete_reaction(info.context.deps, viewer, reaction_id))

    @strawberry.mutation(description="Forget the shouts the signed-in reader read.")
    async def clear_reading_history(self, info: Info) -> CommonResult:
        return common(await histories.clear_history(info.context.deps, await info.context.viewer(), "reading"))

    @strawberry.mutation(description="Forget what the signed-in reader searched for.")
    async def clear_search_history(self, info: Info) -> CommonResult:
        return common(await histories.clear_history(info.context.deps, await info.context.viewer(), "search"))

    @strawberry.mutation
    async def rate_author(self, info: Info, rated_slug: str, value: int) -> CommonResult:
        return common(await rating.rate_author(info.context.deps, await info.context.viewer(), rated_slug, value))

    # --- profile, follows, bookmarks ---------------------------------------------------------------------
    @strawberry.mutation
    async def update_author(self, info: Info, profile: ProfileInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await profiles.update_author(info.context.deps, viewer, as_dict(profile),
                                                   answer=_wants(info, "author")))

    @strawberry.mutation
    async def follow(self, info: Info, what: FollowingEntity, slug: str) -> AuthorFollowsResult:
        viewer = await info.context.viewer()
        return _follows(await following.follow(info.context.deps, viewer, what.value, slug, on=True,
                                              answer=_wants(info, "authors", "topics", "communities")))

    @strawberry.mutation
    async def unfollow(self, info: Info, what: FollowingEntity, slug: str) -> AuthorFollowsResult:
        viewer = await info.context.viewer()
        return _follows(await following.follow(info.context.deps, viewer, what.value, slug, on=False,
                                              answer=_wants(info, "authors", "topics", "communities")))

    @strawberry.mutation
    async def toggle_bookmark_shout(self, info: Info, slug: str) -> CommonResult:
        return common(await bookmark.toggle_bookmark_shout(info.context.deps, await info.context.viewer(), slug))

    # --- topics ------------------------------------------------------------------------------------------
    @strawberry.mutation
    async def create_topic(self, info: Info, topic_input: TopicInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await topic_admin.create_topic(info.context.deps, viewer, as_dict(topic_input)))

    @strawberry.mutation
    async def update_topic(self, info: Info, topic_input: TopicInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await topic_admin.update_topic(info.context.deps, viewer, as_dict(topic_input)))

    @strawberry.mutation
    async def delete_topic(self, info: Info, slug: str) -> CommonResult:
        return common(await topic_admin.delete_topic(info.context.deps, await info.context.viewer(), slug=slug))

    @strawberry.mutation
    async def delete_topic_by_id(self, info: Info, id: int) -> CommonResult:
        return common(await topic_admin.delete_topic(info.context.deps, await info.context.viewer(), topic_id=id))

    @strawberry.mutation(description="Puts a topic under one parent topic of its community, or (no parent) "
                                     "at the root of the community's tree. A cycle is refused.")
    async def set_topic_parent(self, info: Info, topic_id: int, parent_id: int | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await topic_admin.set_topic_parent(info.context.deps, viewer, topic_id, parent_id))

    @strawberry.mutation(description="Folds topics into one, in one transaction: their followers, shouts, "
                                     "drafts and subtopics move to the target and they are deleted; `stats` "
                                     "counts what moved.")
    async def merge_topics(self, info: Info, merge_input: TopicMergeInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await topic_admin.merge_topics(info.context.deps, viewer, as_dict(merge_input)))

    # --- communities -------------------------------------------------------------------------------------
    @strawberry.mutation
    async def create_community(self, info: Info, community_input: CommunityInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await community.create_community(info.context.deps, viewer, as_dict(community_input)))

    @strawberry.mutation
    async def update_community(self, info: Info, community_input: CommunityInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await community.update_community(info.context.deps, viewer, as_dict(community_input)))

    @strawberry.mutation
    async def delete_community(self, info: Info, slug: str) -> CommonResult:
        return common(await community.delete_community(info.context.deps, await info.context.viewer(), slug))

    @strawberry.mutation
    async def join_community(self, info: Info, slug: str) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await community.join_community(info.context.deps, viewer, slug, join=True))

    @strawberry.mutation
    async def leave_community(self, info: Info, slug: str) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await community.join_community(info.context.deps, viewer, slug, join=False))

    # --- invites -----------------------------------------------------------------------------------------
    @strawberry.mutation
    async def create_invite(self, info: Info, slug: str | None = None, author_id: int | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await invite.create_invite(info.context.deps, viewer, slug, author_id))

    @strawberry.mutation
    async def remove_author(self, info: Info, slug: str | None = None, author_id: int | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await invite.remove_author(info.context.deps, viewer, slug, author_id))

    @strawberry.mutation
    async def remove_invite(self, info: Info, invite_id: int) -> CommonResult:
        return common(await invite.remove_invite(info.context.deps, await info.context.viewer(), invite_id))

    @strawberry.mutation
    async def accept_invite(self, info: Info, invite_id: int) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await invite.answer_invite(info.context.deps, viewer, invite_id, accept=True))

    @strawberry.mutation
    async def reject_invite(self, info: Info, invite_id: int) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await invite.answer_invite(info.context.deps, viewer, invite_id, accept=False))

    # --- collections -------------------------------------------------------------------------------------
    @strawberry.mutation
    async def create_collection(self, info: Info, collection_input: CollectionInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await collection.create_collection(info.context.deps, viewer, as_dict(collection_input)))

    @strawberry.mutation
    async def update_collection(self, info: Info, collection_input: CollectionInput) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await collection.update_collection(info.context.deps, viewer, as_dict(collection_input)))

    @strawberry.mutation
    async def delete_collection(self, info: Info, slug: str) -> CommonResult:
        return common(await collection.delete_collection(info.context.deps, await info.context.viewer(), slug))

    # --- notifications -----------------------------------------------------------------------------------
    @strawberry.mutation
    async def notification_mark_seen(self, info: Info, notification_id: int, seen: bool | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await notifications.mark_seen(info.context.deps, viewer, notification_id, seen))

    @strawberry.mutation
    async def notifications_seen_after(self, info: Info, after: int, seen: bool | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await notifications.mark_seen_after(info.context.deps, viewer, after, seen))

    @strawberry.mutation
    async def notifications_seen_thread(self, info: Info, thread_id: str, seen: bool | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await notifications.mark_seen_thread(info.context.deps, viewer, thread_id, seen))

    # the 2025 web client's names for the same (`client-2025/notifications.graphql`)
    @strawberry.mutation(description="Mark a notification group seen (the client passes NotificationGroup.id).")
    async def mark_seen(self, info: Info, notification_id: int) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await notifications.mark_group_seen(info.context.deps, viewer, notification_id))

    @strawberry.mutation
    async def mark_seen_after(self, info: Info, after: int | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await notifications.mark_seen_after(info.context.deps, viewer, after, True))

    @strawberry.mutation
    async def mark_seen_thread(self, info: Info, thread: str, after: int | None = None) -> CommonResult:
        viewer = await info.context.viewer()
        return common(await notifications.mark_seen_thread(info.context.deps, viewer, thread, True, after))

    @strawberry.mutation(description="Stop notifications of a thread, live and listed.")
    async def notification_unsubscribe_thread(self, info: Info, thread_id: str) -> SuccessResult:
        viewer = await info.context.viewer()
        return SuccessResult(**await notifications.unsubscribe_thread(info.context.deps, viewer, thread_id))
