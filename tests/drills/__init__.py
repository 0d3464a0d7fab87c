"""Failover, outage and pressure runs: real servers of the tests' own, stopped, failed over and filled
under load, with no stale read and no failed request."""
