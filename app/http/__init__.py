"""The HTTP path of a request, from the socket to the answer.

A request meets, in order: the slow-client deadlines (`slow_clients`, in uvicorn's protocol), the worker
header (`served_by`), CORS (`cors`), the body limit (`guards`), an event stream's start turn
(`stream_turns`), the response cache in front of everything (`response_front`: a hit answered before
routing, its reads counted by `hit_reads`), then the GraphQL view (`graphql_view`), which composes the rest:

- `graphql_request`: one GraphQL request read once (body, parameters, the documents' keys)
- `exchange`: the request as the view's steps and Strawberry's hooks hand it along: what was asked
  (frozen) and what the steps learn (one writer each)
- `documents`: what a request's document decides (cache policy, state change, stream, rendered answers)
- `read_path`: a read through the response cache, computed once and kept after its answer
- `write_path`: a write in its turn, with its graces and the hot answers it computes again
- `persisted_queries`: Apollo's automatic persisted queries
- `negotiation`: the media type and the encoding of an answer
- `caching`: ETags and Cache-Control of query answers
- `single_flight`: identical misses computed once
- `request_metrics`: a request's outcome and duration, counted
- `write_gate`: at most WRITES_IN_FLIGHT state-changing requests at once
- `write_refresh`: hot responses computed again by the write that made them stale
- `subscription_messages`: WebSocket messages checked before Strawberry's handlers
- `graphiql`: the IDE page, served whole
"""
