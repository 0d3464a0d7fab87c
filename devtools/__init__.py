"""Tools for developing the server (tests, benchmarks); never imported by it."""
