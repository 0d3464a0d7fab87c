"""Builds the Strawberry schema: snake_case field names as in the contract (no camelCase)."""

from __future__ import annotations

import strawberry
from strawberry.schema.config import StrawberryConfig

from schema.errors import ErrorMapping
from schema.query import Query
from schema.types import (
    AuthorFollowsResult,
    AuthResult,
    AuthSuccess,
    Collection,
    Invite,
    MyRateComment,
    MyRateShout,
    Notification,
    NotificationSeenResult,
    NotificationsResult,
    OAuthProvider,
    Rating,
    ReactionUpdating,
    RolesInfo,
    SecurityUpdateResult,
    SessionInfo,
)

# Contract types that no implemented field returns yet: registered so the schema carries every type.
_CONTRACT_TYPES = [
    AuthorFollowsResult, Collection, Invite, MyRateComment, MyRateShout, Notification, AuthResult,
    AuthSuccess, NotificationSeenResult, NotificationsResult, OAuthProvider, Rating, ReactionUpdating,
    RolesInfo, SecurityUpdateResult, SessionInfo,
]


def build_schema() -> strawberry.Schema:
    from schema import inputs

    contract_inputs = [
        inputs.MediaItemInput, inputs.AuthorInput, inputs.TopicInput, inputs.DraftInput, inputs.ProfileInput,
        inputs.ReactionInput, inputs.NotificationSeenInput, inputs.CommunityInput, inputs.CollectionInput,
    ]
    from schema import enums

    return strawberry.Schema(
        query=Query,
        types=[*_CONTRACT_TYPES, *contract_inputs, enums.FollowingEntity, enums.InviteStatus,
               enums.AuthAction, enums.RoleType, enums.ReactionStatus, enums.ShoutsOrderBy],
        config=StrawberryConfig(auto_camel_case=False),
        extensions=[ErrorMapping],
    )
