"""What GraphiQL's documentation explorer and every introspecting client read about the root fields: a line
for each query, mutation and subscription, one for each argument, and who may call it.

Descriptions written beside a resolver (`description=` in schema/query.py and the others) stay; this table
gives the others, applied to the built schema by `describe`. An argument takes its field's own line
(`"Query.get_shout(slug)"`), else the line of its name (`ARGUMENTS`). Who may call an operation comes from
the authorization table (auth/operations.py), so the explorer says what the server enforces.
`tests/schema/test_descriptions.py` counts them: every root field and argument has one, and the table
names nothing the schema lacks."""

from __future__ import annotations

from graphql import GraphQLSchema

from auth.operations import MUTATIONS, QUERIES, SUBSCRIPTIONS, Access, Refusal, Who

FIELDS: dict[str, str] = {
    # accounts and sessions
    "Query.me": "The signed-in caller: the session's token and the author it belongs to.",
    "Query.logout": "End the caller's session (the query form of the `logout` mutation, as the 2025 client calls "
                    "it).",
    "Query.isEmailUsed": "Whether an account with this e-mail address exists.",
    "Query.isAdmin": "Whether the caller administers the platform (false for a guest).",
    "Query.getOAuthProviders": "The sign-in providers this server offers (`/oauth/{provider}` starts one).",
    "Query.getRoles": "The roles there are, with what each may do.",
    "Query.get_author_id": "The author of an account, by the account's id as Discours' auth service named it.",
    "Mutation.login": "Sign in with an e-mail address and a password: the session's token, also set as the "
                      "httpOnly session cookie.",
    "Mutation.logout": "End the caller's session (its token stops working at once).",
    "Mutation.refreshToken": "A new token for the caller's session; the old one stops working.",
    "Mutation.registerUser": "Open an account; a mail with a link to confirm the address is sent.",
    "Mutation.sendLink": "Send a link to an address: to confirm it, or to sign in with it.",
    "Mutation.confirmEmail": "Confirm an address with the token of its link; signs the account in.",
    "Mutation.getSession": "The caller's session: its token and author (the 2025 client's check at start).",
    "Mutation.changePassword": "Change the caller's password; the caller's other sessions end.",
    "Mutation.resetPassword": "Set a new password with the token of a reset link; every session of the account "
                              "ends.",
    "Mutation.requestPasswordReset": "Send a password-reset link to an address (answered alike whether or not "
                                     "an account has it).",
    "Mutation.updateSecurity": "Change the caller's e-mail address (confirmed by a link sent to the new one) "
                               "and/or password; the current password is required.",
    "Mutation.confirmEmailChange": "Confirm a change of address with the token of its link.",
    "Mutation.cancelEmailChange": "Cancel the caller's pending change of address.",
    # the admin API
    "Query.adminGetShouts": "Shouts for moderation, newest first, with their total: by status (published, "
                            "draft, deleted), community and text (title, slug, id or body).",
    "Query.adminGetReactions": "Comments and reactions for moderation, newest first, with their total: by "
                               "kind, shout, community, status (deleted included) and text.",
    "Query.adminGetTopics": "Every topic of a community, with its parents, for the editors' tree.",
    "Query.getEnvVariables": "The server's settings an administrator may read and change, by section (secrets "
                             "are never shown).",
    "Query.adminGetUsers": "Accounts, with their total, searched by name, slug, e-mail address or id.",
    "Query.adminGetRoles": "The roles of a community (its own among them), or the platform's.",
    "Query.adminGetUserCommunityRoles": "A person's roles in a community.",
    "Query.adminGetCommunityMembers": "A community's members with their roles, with their total.",
    "Query.adminGetCommunityRoleSettings": "A community's default roles (given to who joins) and the roles it "
                                           "offers.",
    "Query.adminGetInvites": "Invitations to co-author, with their total: by status, community and text.",
    "Mutation.adminUpdateShout": "Edit a shout as its community's editor (title, lead, topics, status); written "
                                 "to the audit trail.",
    "Mutation.adminDeleteShout": "Hide a shout (a soft delete: restorable); readers no longer see it.",
    "Mutation.adminRestoreShout": "Bring a hidden shout back as it was.",
    "Mutation.adminUpdateReaction": "Edit a comment's text or kind as its community's editor.",
    "Mutation.adminDeleteReaction": "Hide a comment or reaction (restorable); its thread and counts follow.",
    "Mutation.adminRestoreReaction": "Bring a hidden comment or reaction back where it was.",
    "Mutation.adminCreateTopic": "Create a topic in a community.",
    "Mutation.adminUpdateTopic": "Rename a topic, change its text, or move it under other parents.",
    "Mutation.adminMergeTopics": "Merge topics into one: their followers, shouts, drafts and subtopics move to "
                                 "it, and they are removed, in one transaction.",
    "Mutation.updateEnvVariable": "Change one of the server's settings that may be changed while it runs.",
    "Mutation.updateEnvVariables": "Change several of the server's settings at once (all or none).",
    "Mutation.adminUpdateUser": "Change an account as an administrator (name, address, roles, blocked).",
    "Mutation.adminUpdateUserCommunityRoles": "Set a person's roles in a community (the old contract's name of "
                                              "`adminSetUserCommunityRoles`).",
    "Mutation.adminSetUserCommunityRoles": "Set a person's roles in a community to exactly these.",
    "Mutation.adminAddUserToRole": "Give a person one more role in a community.",
    "Mutation.adminRemoveUserFromRole": "Take one role of a person's in a community away.",
    "Mutation.adminUpdateCommunityRoleSettings": "Set a community's default roles and the roles it offers.",
    "Mutation.adminCreateCustomRole": "Create a community's own role, with what it may do.",
    "Mutation.adminDeleteCustomRole": "Remove a community's own role (from everyone who holds it too).",
    "Mutation.adminUpdateInvite": "Change an invitation's status as its community's editor.",
    "Mutation.adminDeleteInvite": "Delete one invitation.",
    "Mutation.adminDeleteInvitesBatch": "Delete several invitations (all or none: one unknown deletes nothing).",
    # feeds of the signed-in reader
    "Query.load_shouts_feed": "The caller's feed: shouts by the authors, topics and communities the caller "
                              "follows, newest first.",
    "Query.load_shouts_followed_by": "Shouts by what an author follows (the caller, or the author of `slug`).",
    "Query.load_shouts_unrated": "Newest shouts the caller has neither voted on nor written.",
    "Query.load_shouts_coauthored": "The caller's shouts that have other authors too.",
    "Query.load_shouts_discussed": "Shouts the caller has commented on, most recently discussed first.",
    "Query.load_shouts_bookmarked": "The shouts the caller bookmarked, newest bookmark first.",
    "Query.get_my_rates_shouts": "The caller's votes on these shouts.",
    "Query.get_my_rates_comments": "The caller's votes on these comments.",
    "Query.get_my_shout": "One of the caller's shouts, published or not, with its draft, to edit.",
    "Query.get_shouts_drafts": "The caller's shouts that are not published.",
    "Query.load_drafts": "The caller's drafts, those co-authored included, newest first.",
    "Query.load_notifications": "The caller's notifications after a time, grouped by thread, with counts of "
                                "the unseen.",
    # authors
    "Query.get_author": "An author by slug or id, with the stats of the author's page.",
    "Query.get_authors_all": "Every author.",
    "Query.load_authors_by": "Authors by a filter (a topic, a last-seen time, …) in an order (followers, "
                             "shouts, name, …).",
    "Query.load_authors_search": "Authors whose name or slug match a text, best match first.",
    "Query.get_author_followers": "The people who follow an author.",
    "Query.get_author_follows": "What an author follows: authors, topics and communities.",
    "Query.get_author_follows_topics": "The topics an author follows.",
    "Query.get_author_follows_authors": "The authors an author follows.",
    # communities, collections, topics
    "Query.get_community": "The platform's default community.",
    "Query.get_communities_all": "Every community.",
    "Query.get_communities_by_author": "The communities an author belongs to.",
    "Query.get_collection": "A collection of shouts by slug.",
    "Query.get_collections_all": "Every published collection.",
    "Query.get_collections_by_author": "The collections an author made.",
    "Query.get_topic": "A topic by slug, with its stats.",
    "Query.get_topics_all": "Every topic with its stats (shouts, followers, authors, comments).",
    "Query.get_topics_by_author": "The topics an author writes in.",
    "Query.get_topics_by_community": "The topics of a community.",
    "Query.get_topic_followers": "The people who follow a topic.",
    "Query.get_topic_authors": "The authors who write in a topic.",
    "Query.get_shout_followers": "The people who follow a shout's discussion.",
    # reactions
    "Query.load_reactions_by": "Comments and reactions by a filter (shout, author, kinds, time, …), newest "
                               "first unless the filter says otherwise.",
    "Query.load_shout_comments": "A shout's comments, oldest first.",
    "Query.load_shout_ratings": "A shout's votes.",
    "Query.load_comment_ratings": "A comment's votes.",
    "Query.load_comments_branch": "A shout's comment thread a branch at a time: the comments under a parent "
                                  "(top level without one), each with its first replies and their count.",
    # shouts
    "Query.get_shout": "A published shout by slug or id, with its body, authors, topics and stats.",
    "Query.load_shouts_by": "Published shouts by filters (topic, author, community, featured, a time, …) in "
                            "an order (newest, rating, comments, views).",
    "Query.load_shouts_with_topic": "Published shouts of a topic.",
    "Query.load_shouts_authored_by": "Published shouts of an author.",
    "Query.load_shouts_random_top": "A random sample of the best-rated shouts.",
    "Query.get_search_results_count": "How many shouts a search finds.",
    "Query.load_shouts_search": "Shouts found by a text (title, lead, body; Russian and English word forms), "
                                "best match first, with the matching passage.",
    # writing
    "Mutation.create_draft": "Start a draft; the caller is its author.",
    "Mutation.update_draft": "Change a draft (its text, title, topics, authors, …).",
    "Mutation.delete_draft": "Delete a draft.",
    "Mutation.publish_draft": "Publish a draft as a shout (or publish its changes to the shout it is of).",
    "Mutation.unpublish_draft": "Take the shout of a draft off the site; the draft stays.",
    "Mutation.publish_shout": "Publish a shout again.",
    "Mutation.unpublish_shout": "Take a shout off the site; it stays a draft.",
    "Mutation.create_reaction": "Comment on a shout (or reply to a comment), or vote on a shout or a comment.",
    "Mutation.update_reaction": "Change the text of one's comment.",
    "Mutation.delete_reaction": "Delete one's comment or vote.",
    "Mutation.rate_author": "Vote on an author (once: a new vote replaces the caller's last).",
    "Mutation.update_author": "Change the caller's profile (name, bio, picture, links, …).",
    "Mutation.follow": "Follow an author, a topic, a community or a shout's discussion.",
    "Mutation.unfollow": "Stop following an author, a topic, a community or a shout's discussion.",
    "Mutation.toggle_bookmark_shout": "Bookmark a shout, or remove the bookmark.",
    "Mutation.create_topic": "Create a topic.",
    "Mutation.update_topic": "Change a topic.",
    "Mutation.delete_topic": "Delete a topic by slug.",
    "Mutation.delete_topic_by_id": "Delete a topic by id.",
    "Mutation.create_community": "Create a community; the caller is its founder and first administrator.",
    "Mutation.update_community": "Change a community.",
    "Mutation.delete_community": "Delete a community.",
    "Mutation.join_community": "Join a community (with its default roles).",
    "Mutation.leave_community": "Leave a community.",
    "Mutation.create_invite": "Invite an author to co-author one's shout.",
    "Mutation.remove_author": "Remove a co-author from one's shout.",
    "Mutation.remove_invite": "Withdraw an invitation one made.",
    "Mutation.accept_invite": "Accept an invitation: the caller becomes an author of the shout.",
    "Mutation.reject_invite": "Decline an invitation.",
    "Mutation.create_collection": "Create a collection of shouts.",
    "Mutation.update_collection": "Change a collection.",
    "Mutation.delete_collection": "Delete a collection.",
    # notifications
    "Mutation.notification_mark_seen": "Mark one notification seen (or unseen).",
    "Mutation.notifications_seen_after": "Mark every notification after a time seen (or unseen).",
    "Mutation.notifications_seen_thread": "Mark a thread's notifications seen (or unseen).",
    "Mutation.mark_seen_after": "Mark every notification after a time seen (the 2025 client's name).",
    "Mutation.mark_seen_thread": "Mark a thread's notifications seen (the 2025 client's name).",
}

# An argument's line by its name, for every field that takes it without a line of its own.
ARGUMENTS: dict[str, str] = {
    "slug": "The slug of what is asked for (the readable part of its address).",
    "limit": "How many at most (each operation has a default and a ceiling).",
    "offset": "How many to skip, for the next page.",
    "author_id": "An author's id.",
    "community_id": "A community's id.",
    "community": "Only those of this community (its id).",
    "options": "The filters, order and page: `limit` (required), `offset`, `order_by`, `order_by_desc`, "
               "`filters` and, for a random sample, `random_limit`.",
    "user": "An account's id as Discours' auth service named it (instead of `slug` or `author_id`).",
    "shout_id": "A shout's id.",
    "email": "An e-mail address.",
    "draft_id": "A draft's id.",
    "search": "A text to search for (names, titles, slugs, ids).",
    "after": "A time, in seconds since 1970 (UTC).",
    "shout": "A shout's id.",
    "id": "The id of what is acted on.",
    "status": "Only those in this status.",
    "text": "The text to search for.",
    "token": "The token of the link the mail carried.",
    "reaction": "The reaction: its shout, kind, body and the comment it replies to.",
    "reaction_id": "A reaction's (or comment's) id.",
    "role_id": "A role's id (`reader`, `author`, `editor`, `admin`, or a community's own).",
    "invite_id": "An invitation's id.",
    "seen": "Seen (the default) or unseen again.",
    "by": "The filter.",
    "parent_id": "The comment whose replies are asked for; none for the top level.",
    "password": "The password.",
    "lang": "The language of the mail (`ru`, `en`).",
    "newPassword": "The new password.",
    "topic": "The topic.",
    "merge_input": "The topics to merge and the one they merge into.",
    "value": "The value.",
    "roles": "Role ids, all of them (what is not named is taken away).",
    "draft_input": "The draft's fields; those not given stay as they are.",
    "what": "What to follow: AUTHOR, TOPIC, COMMUNITY or SHOUT.",
    "topic_input": "The topic's fields.",
    "community_input": "The community's fields.",
    "collection_input": "The collection's fields.",
    "notification_id": "A notification's id.",
    "thread_id": "A notification thread's id (as `load_notifications` gives it).",
    "thread": "A notification thread's id (as `load_notifications` gives it).",
    "kind": "Only reactions of this kind.",
    "entity": "Only entries about this kind of thing (`shout`, `reaction`, `topic`, `author`, …).",
    "entity_id": "Only entries about the thing with this id.",
    "action": "Only entries of this action.",
    "actor": "Only entries by this author (id).",
    "shouts": "Shouts' ids.",
    "comments": "Comments' ids.",
    "comment": "A comment's id.",
    "sort": "The order of the top-level comments: newest, oldest or most liked.",
    "children_limit": "How many replies each comment comes with.",
    "children_offset": "How many of each comment's replies to skip.",
    "order_by": "The order: by rating, comments or views.",
    "week": "An ISO week (`2026-W47`), or `current`; none: all time.",
    "name": "The name.",
    "template": "The mail's variant: `verification` (the 2025 client's), or the default sign-in link.",
    "oldPassword": "The current password.",
    "old_password": "The current password (required for any change).",
    "new_password": "The new password.",
    "key": "The setting's name.",
    "variable": "The setting: its key and value.",
    "variables": "The settings: each its key and value.",
    "profile": "The profile's fields; those not given stay as they are.",
    "rated_slug": "The slug of the author voted on.",
    "radius": "How many levels of replies around it.",
    "default_roles": "The roles who joins gets.",
    "available_roles": "The roles the community offers.",
    "role": "The role: its id, name, community and what it may do.",
    "invite": "The invitation: who invited whom to which shout, and its status.",
    "invites": "The invitations: each who invited whom to which shout.",
    "inviter_id": "The id of the author who invited.",
    "topic_id": "A topic's id.",
    "publish_at": "When to publish it, in seconds since 1970 (UTC), within a year; none: not scheduled.",
}

# An argument whose line is not its name's.
FIELD_ARGUMENTS: dict[str, str] = {
    "Query.adminGetShouts(status)": "`published`, `draft` or `deleted`; none: all.",
    "Query.adminGetReactions(status)": "`active` or `deleted`; none: all.",
    "Query.adminGetInvites(status)": "`pending`, `accepted` or `rejected`; none: all.",
    "Query.adminGetReactions(shout_id)": "Only the reactions to this shout.",
    "Query.load_shouts_search(text)": "Words to find (their forms too), or a phrase in quotes.",
    "Query.get_search_results_count(text)": "Words to find (their forms too), or a phrase in quotes.",
    "Query.load_authors_search(text)": "A name or part of one.",
    "Query.isEmailUsed(email)": "The address to look for.",
    "Mutation.login(email)": "The account's e-mail address.",
    "Mutation.login(password)": "The account's password.",
    "Mutation.registerUser(email)": "The new account's address (a link to confirm it is sent there).",
    "Mutation.registerUser(password)": "Its password (8 characters or more); none: sign in by mailed links.",
    "Mutation.registerUser(name)": "The author's name; none: taken from the address.",
    "Mutation.sendLink(email)": "The address to send the link to.",
    "Mutation.requestPasswordReset(email)": "The account's address.",
    "Mutation.updateSecurity(email)": "The new address (confirmed by a link sent to it).",
    "Mutation.follow(slug)": "The slug of the author, topic, community or shout.",
    "Mutation.unfollow(slug)": "The slug of the author, topic, community or shout.",
    "Mutation.toggle_bookmark_shout(slug)": "The shout's slug.",
    "Mutation.create_invite(slug)": "The slug of the caller's shout.",
    "Mutation.create_invite(author_id)": "The author invited.",
    "Mutation.remove_author(slug)": "The shout's slug.",
    "Mutation.remove_author(author_id)": "The co-author removed.",
    "Mutation.updateEnvVariable(value)": "The new value (with `key`; or both in `variable`).",
    "Mutation.adminDeleteInvite(author_id)": "The id of the author invited.",
    "Mutation.adminDeleteInvite(shout_id)": "The shout the invitation is to.",
    "Mutation.adminCreateTopic(topic)": "The topic: community, slug, title, body, parents.",
    "Mutation.adminUpdateTopic(topic)": "The topic's id and the fields that change.",
    "Query.load_notifications(after)": "Notifications after this time, in seconds since 1970 (UTC).",
    "Mutation.mark_seen_thread(after)": "Only the thread's notifications after this time.",
    "Query.get_shout(slug)": "The shout's slug (or `shout_id`).",
    "Query.get_shout(shout_id)": "The shout's id (or `slug`).",
    "Query.get_author(slug)": "The author's slug (or `author_id`).",
    "Query.get_author(author_id)": "The author's id (or `slug`).",
    "Query.load_shouts_followed_by(slug)": "The author whose follows are read; none: the caller.",
}

_WHO = {Who.ANYONE: "anyone", Who.SIGNED_IN: "anyone signed in", Who.OWNERS: "its owners",
        Who.EDITORS: "its community's editors", Who.ADMINS: "its community's administrators"}


def who_may_call(access: Access) -> str:
    """The sentence a description ends with, from the authorization table's entry."""
    if access.who == {Who.ANYONE}:
        return "Anyone may call it."
    names = " or ".join(_WHO[who] for who in (Who.SIGNED_IN, Who.OWNERS, Who.EDITORS, Who.ADMINS)
                        if who in access.who)
    guests = " (a guest gets an empty answer)" if access.anonymous is Refusal.PUBLIC else ""
    return f"Who may call it: {names}{guests}."


def describe(schema: GraphQLSchema) -> None:
    """Give every root field and argument of `schema` its line, and each root field who may call it."""
    tables = {"Query": QUERIES, "Mutation": MUTATIONS, "Subscription": SUBSCRIPTIONS}
    for type_name, access_of in tables.items():
        root = schema.get_type(type_name)
        for name, field in getattr(root, "fields", {}).items():
            key = f"{type_name}.{name}"
            access = access_of.get(name)
            who = who_may_call(access) if access is not None else ""
            own = field.description or FIELDS.get(key) or ""
            if not own.endswith(who):  # described once, however often a schema is built over the same types
                field.description = f"{own} {who}".strip() or None
            for argument_name, argument in field.args.items():
                if not argument.description:
                    argument.description = (FIELD_ARGUMENTS.get(f"{key}({argument_name})")
                                            or ARGUMENTS.get(argument_name))
