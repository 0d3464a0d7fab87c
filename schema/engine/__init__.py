"""How the contract's schema is executed: the parts of a GraphQL answer that are not the contract's types.

- `seam`: every use of Strawberry and graphql-core past their public API (canaries guard each)
- `execution`: plain fields read in graphql-core's own field loop, no resolver call per field
- `rendered`: root fields answered from their rendered JSON instead of being executed
- `item_fragments`: a page's items answered one by one from their rendered JSON
- `node_memo`: what a parsed document's nodes work out, kept for the next request of the document
- `cache_control`: how long an answer may be kept and by whom, declared next to the types
- `limits`: what one request may ask (tokens, depth, aliases, cost), checked before any resolver runs
- `safety`: which operations change state and so never run over GET
- `errors`: the one place where exceptions become GraphQL errors with `extensions.code`
- `stream_starts`: subscriptions started a few at a time, so a burst shares the loop

Nothing here imports the contract's types (`schema.types` and the rest of `schema/`): they import it.
"""
