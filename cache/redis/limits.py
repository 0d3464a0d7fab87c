"""Seed 004's bound on one Redis call, in one place: every part that splits work into commands takes it
from here (keys a command, elements a step of SSCAN/SPOP/SCAN, commands a pipeline or a coalesced round
trip)."""

BATCH = 100
