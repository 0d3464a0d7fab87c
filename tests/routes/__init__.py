"""The routes beside /graphql (app/routes/): observability and the pages mail links open."""
