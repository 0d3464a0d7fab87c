"""Builds the Strawberry schema: snake_case field names as in the contract (no camelCase)."""

from __future__ import annotations

import strawberry
from strawberry.schema.config import StrawberryConfig

from schema import enums, inputs, types
from schema.admin import AdminMutation
from schema.auth import AuthMutation
from schema.errors import ErrorMapping
from schema.query import Query


@strawberry.type
class Mutation(AuthMutation, AdminMutation):
    """Mutations, by area (auth now; the write side adds its own classes to the bases)."""

# Contract types, inputs and enums that no implemented field uses yet: registered so the schema carries
# every one of them from the start (the mutation and auth issues put them to work).
_NOT_YET_REACHABLE = [
    types.AuthorFollowsResult, types.Collection, types.Invite, types.MyRateComment, types.MyRateShout,
    types.Notification, types.AuthResult, types.AuthSuccess, types.NotificationSeenResult,
    types.NotificationsResult, types.OAuthProvider, types.Rating, types.ReactionUpdating, types.RolesInfo,
    types.SecurityUpdateResult, types.SessionInfo,
    inputs.MediaItemInput, inputs.AuthorInput, inputs.TopicInput, inputs.DraftInput, inputs.ProfileInput,
    inputs.ReactionInput, inputs.NotificationSeenInput, inputs.CommunityInput, inputs.CollectionInput,
    enums.FollowingEntity, enums.InviteStatus, enums.AuthAction, enums.RoleType, enums.ReactionStatus,
]


def build_schema() -> strawberry.Schema:
    return strawberry.Schema(
        query=Query,
        mutation=Mutation,
        types=_NOT_YET_REACHABLE,
        config=StrawberryConfig(auto_camel_case=False),
        extensions=[ErrorMapping],
    )
