"""The `discours` command line as a person runs it (app/cli/), the embedded default among it."""
