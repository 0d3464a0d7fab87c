"""What a new reaction's request must hold before anything is written: a writer allowed to react, and a body
where its kind needs one, of a bounded length."""

from __future__ import annotations

from typing import Any

from auth.permissions import Viewer
from orm.reaction import ReactionKind
from resolvers.access import require
from resolvers.errors import BadInput

MAX_BODY = 10_000
PROOF_KINDS = (ReactionKind.PROOF.value, ReactionKind.DISPROOF.value)
NEEDS_BODY = (ReactionKind.COMMENT.value, ReactionKind.QUOTE.value, ReactionKind.PROPOSE.value,
              ReactionKind.ASK.value)


def checked_input(viewer: Viewer | None, reaction: dict[str, Any]) -> tuple[Viewer, str, str | None]:
    """A new reaction's writer, kind and body, or the error its request gets."""
    kind = str(reaction["kind"])
    signed_in = require(viewer, "reaction:create_proof" if kind in PROOF_KINDS else "reaction:create")
    body = (reaction.get("body") or "").strip() or None
    if kind in NEEDS_BODY and not body:
        raise BadInput(f"a {kind} needs a body", field="body")
    if body and len(body) > MAX_BODY:
        raise BadInput("the body is too long", field="body")
    return signed_in, kind, body
