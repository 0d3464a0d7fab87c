"""The ASGI application and the command line.

- `main`: the app factory and its lifespan, which owns every client, engine and background task
- `asgi`: the module uvicorn imports in every worker
- `graceful`: graceful restarts behind a load balancer
- `logs`: what may never reach a log line
- `http/`: a request's path to its answer; `routes/`: the routes beside /graphql; `cli/`: the `discours`
  command
"""
