"""The `discours` command line.

- `commands`: the entry point and its commands (serve, migrate, seed, rebuild, queue, export-schema)
- `adopt`: `discours adopt`, taking over a Discours database
- `cache_tools`: `discours cache ...`, the cache from a shell
- `seed`: deterministic demo data; `corpus`: the texts it writes
"""
