"""The HTTP path of a request (app/http/): reading it once, negotiation, persisted queries, deadlines,
the write gate, the WebSocket checks, CORS and GraphiQL."""
