"""The API as a client meets it: the contract's schema and operations, the 2025 web client's, the Discours
backend's answers, every operation's authorization, bad input and the fuzzer."""
