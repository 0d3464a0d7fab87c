"""Who may call each operation of the API: one entry per query, mutation and subscription of the schema.

auth/permissions.py decides what a role may do; this table says, per operation, whom that lets through
when the operation is called on another person's object, and what a caller who may not gets. The
authorization matrix (tests/api/test_authorization_matrix.py) calls every operation of the exported schema as
each kind of caller and holds the answers to this table; an operation missing from it fails that test,
so no operation lands unchecked. Operations added later (the admin API's among them) add their line here.

The kinds of caller, for an operation on an object of someone else's in a community:
- ANYONE: every caller, signed in or not;
- SIGNED_IN: any signed-in caller, acting on their own things (their follows, their profile, their
  lists) or on public ones;
- OWNERS: the object's owners (a draft's or shout's authors, a reaction's or collection's creator, the
  person invited, who invited);
- EDITORS: editors and administrators of the object's community;
- ADMINS: administrators of the object's community.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Who(Enum):
    ANYONE = "anyone"
    SIGNED_IN = "signed in"
    OWNERS = "owners"
    EDITORS = "editors"
    ADMINS = "admins"


class Refusal(Enum):
    """What a caller who may not gets: an error with this `extensions.code`, or (PUBLIC) an answer that
    carries nothing private (no e-mail, roles, draft or notification of anyone else)."""

    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"  # for what is private enough that its existence is not told either
    PUBLIC = "PUBLIC"


@dataclass(frozen=True)
class Access:
    who: frozenset[Who]
    anonymous: Refusal = Refusal.UNAUTHENTICATED  # an anonymous caller who may not
    others: Refusal = Refusal.FORBIDDEN  # a signed-in caller who may not


ANYONE = Access(frozenset({Who.ANYONE}))
SIGNED_IN = Access(frozenset({Who.SIGNED_IN}))
# a signed-in caller's own answer; an anonymous one gets the answer of nobody's (false)
SIGNED_IN_OR_EMPTY = Access(frozenset({Who.SIGNED_IN}), anonymous=Refusal.PUBLIC)
OWNERS = Access(frozenset({Who.OWNERS}))
OWNERS_OR_EDITORS = Access(frozenset({Who.OWNERS, Who.EDITORS}))
OWNERS_OR_ADMINS = Access(frozenset({Who.OWNERS, Who.ADMINS}))
EDITORS = Access(frozenset({Who.EDITORS}))
ADMINS = Access(frozenset({Who.ADMINS}))
OWN_NOTIFICATION = Access(frozenset({Who.OWNERS}), others=Refusal.NOT_FOUND)

QUERIES: dict[str, Access] = {
    # accounts and sessions
    "me": SIGNED_IN,
    "logout": SIGNED_IN,
    "isEmailUsed": ANYONE,
    "isAdmin": SIGNED_IN_OR_EMPTY,
    "getOAuthProviders": ANYONE,
    "getRoles": ANYONE,
    "get_author_id": ANYONE,
    "getEnvVariables": ADMINS,
    # moderation, topics and the audit trail (the admin API)
    "adminGetShouts": EDITORS,
    "adminGetReactions": EDITORS,
    "adminGetTopics": EDITORS,
    "adminGetAuditLog": ADMINS,
    "adminGetInvites": EDITORS,
    # people and roles (the admin API): accounts are the platform's administrators', a community's roles
    # its administrators' (its founder, the owner here, is its first)
    "adminGetUsers": ADMINS,
    "adminGetRoles": OWNERS_OR_ADMINS,
    "adminGetUserCommunityRoles": OWNERS_OR_ADMINS,
    "adminGetCommunityMembers": OWNERS_OR_ADMINS,
    "adminGetCommunityRoleSettings": OWNERS_OR_ADMINS,
    # the signed-in reader's own lists
    "load_shouts_feed": SIGNED_IN,
    "load_shouts_followed_by": ANYONE,  # someone's follows are public; without a slug, one's own
    "load_shouts_unrated": SIGNED_IN,
    "load_shouts_coauthored": SIGNED_IN,
    "load_shouts_discussed": SIGNED_IN,
    "load_shouts_bookmarked": SIGNED_IN,
    "get_my_rates_shouts": SIGNED_IN,
    "get_my_rates_comments": SIGNED_IN,
    "get_my_shout": OWNERS_OR_EDITORS,
    "load_reading_history": SIGNED_IN,
    "load_search_history": SIGNED_IN,
    "get_shouts_drafts": SIGNED_IN,
    "load_drafts": SIGNED_IN,
    "load_notifications": SIGNED_IN,
    # public reads
    "get_author": ANYONE,
    "get_authors_all": ANYONE,
    "load_authors_around": ANYONE,
    "load_authors_by": ANYONE,
    "load_authors_search": ANYONE,
    "get_author_followers": ANYONE,
    "get_author_follows": ANYONE,
    "get_author_follows_topics": ANYONE,
    "get_author_follows_authors": ANYONE,
    "get_community": ANYONE,
    "get_communities_all": ANYONE,
    "get_communities_by_author": ANYONE,
    "get_topic": ANYONE,
    "get_topics_all": ANYONE,
    "get_topics_by_author": ANYONE,
    "get_topics_by_community": ANYONE,
    "get_topic_followers": ANYONE,
    "get_topic_authors": ANYONE,
    "get_shout_followers": ANYONE,
    "get_collection": ANYONE,
    "get_collections_all": ANYONE,
    "get_collections_by_author": ANYONE,
    "get_search_results_count": ANYONE,
    "load_reactions_by": ANYONE,
    "load_shout_comments": ANYONE,
    "load_shout_ratings": ANYONE,
    "load_comment_ratings": ANYONE,
    "load_comments_branch": ANYONE,
    "get_shout": ANYONE,
    "load_shouts_by": ANYONE,
    "load_shouts_with_topic": ANYONE,
    "load_shouts_authored_by": ANYONE,
    "load_shouts_random_top": ANYONE,
    "load_shouts_top": ANYONE,
    "load_shouts_search": ANYONE,
}

MUTATIONS: dict[str, Access] = {
    # accounts and sessions: a token or a password is what proves who may
    "login": ANYONE,
    "logout": SIGNED_IN,
    "refreshToken": SIGNED_IN,
    "registerUser": ANYONE,
    "sendLink": ANYONE,
    "confirmEmail": ANYONE,
    "getSession": SIGNED_IN,
    "changePassword": SIGNED_IN,
    "resetPassword": ANYONE,
    "requestPasswordReset": ANYONE,
    "updateSecurity": SIGNED_IN,
    "confirmEmailChange": ANYONE,
    "cancelEmailChange": SIGNED_IN,
    "updateEnvVariable": ADMINS,
    "updateEnvVariables": ADMINS,
    "adminUpdateShout": EDITORS,
    "adminDeleteShout": EDITORS,
    "adminRestoreShout": EDITORS,
    "adminUpdateReaction": EDITORS,
    "adminDeleteReaction": EDITORS,
    "adminRestoreReaction": EDITORS,
    "adminCreateTopic": EDITORS,
    "adminUpdateTopic": EDITORS,
    "adminMergeTopics": EDITORS,
    "adminUpdateInvite": EDITORS,
    "adminDeleteInvite": EDITORS,
    "adminDeleteInvitesBatch": EDITORS,
    "adminUpdateUser": ADMINS,
    "adminDeleteUser": ADMINS,
    "adminUpdateUserCommunityRoles": OWNERS_OR_ADMINS,
    "adminSetUserCommunityRoles": OWNERS_OR_ADMINS,
    "adminAddUserToRole": OWNERS_OR_ADMINS,
    "adminRemoveUserFromRole": OWNERS_OR_ADMINS,
    "adminUpdateCommunityRoleSettings": OWNERS_OR_ADMINS,
    "adminCreateCustomRole": OWNERS_OR_ADMINS,
    "adminDeleteCustomRole": OWNERS_OR_ADMINS,
    "adminUpdatePermissions": ADMINS,
    # drafts and publishing
    "create_draft": SIGNED_IN,
    "create_draft_from_shout": OWNERS_OR_EDITORS,
    "update_draft": OWNERS_OR_EDITORS,
    "delete_draft": OWNERS_OR_EDITORS,
    "publish_draft": OWNERS_OR_EDITORS,
    "schedule_draft": OWNERS_OR_EDITORS,
    "unpublish_draft": OWNERS_OR_EDITORS,
    "publish_shout": OWNERS_OR_EDITORS,
    "unpublish_shout": OWNERS_OR_EDITORS,
    # reactions and ratings
    "create_reaction": SIGNED_IN,
    "update_reaction": OWNERS,
    "delete_reaction": OWNERS_OR_EDITORS,
    "clear_reading_history": SIGNED_IN,
    "clear_search_history": SIGNED_IN,
    "rate_author": SIGNED_IN,
    # profile, follows, bookmarks
    "update_author": SIGNED_IN,
    "follow": SIGNED_IN,
    "unfollow": SIGNED_IN,
    "toggle_bookmark_shout": SIGNED_IN,
    # topics and communities
    "create_topic": EDITORS,
    "update_topic": EDITORS,
    "delete_topic": EDITORS,
    "delete_topic_by_id": EDITORS,
    "set_topic_parent": EDITORS,
    "merge_topics": EDITORS,
    "create_community": SIGNED_IN,
    "update_community": OWNERS_OR_ADMINS,  # its creator is its first administrator
    "delete_community": OWNERS_OR_ADMINS,
    "join_community": SIGNED_IN,
    "leave_community": SIGNED_IN,
    # co-authors and invitations
    "create_invite": OWNERS,
    "remove_author": OWNERS_OR_EDITORS,
    "remove_invite": OWNERS,
    "accept_invite": OWNERS,
    "reject_invite": OWNERS,
    # collections
    "create_collection": SIGNED_IN,
    "update_collection": OWNERS_OR_EDITORS,
    "delete_collection": OWNERS_OR_EDITORS,
    # notifications: one's own; someone else's is not found
    "notification_mark_seen": OWN_NOTIFICATION,
    "notifications_seen_after": SIGNED_IN,
    "notifications_seen_thread": SIGNED_IN,
    "mark_seen": OWN_NOTIFICATION,
    "mark_seen_after": SIGNED_IN,
    "mark_seen_thread": SIGNED_IN,
    "notification_unsubscribe_thread": SIGNED_IN,
}

SUBSCRIPTIONS: dict[str, Access] = {
    "notifications": SIGNED_IN,
    "shout_reactions": ANYONE,
    "topic_shouts": ANYONE,
}

OPERATIONS: dict[str, dict[str, Access]] = {"Query": QUERIES, "Mutation": MUTATIONS, "Subscription": SUBSCRIPTIONS}
