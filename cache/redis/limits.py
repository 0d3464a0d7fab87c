"""Seed 004's bound on one Redis call, in one place: every part that splits work into commands takes it
from here (keys a command, elements a step of SSCAN/SPOP/SCAN, commands a pipeline or a coalesced round
trip)."""

BATCH = 100

# One server: messages are published by script calls of this many each (two arguments a message: a hundred
# elements a command). An event that concerns a discussion's followers is a message per follower, and a
# command each cost the writer more to pack and its reply more to read than Redis takes to publish them.
PUBLISH_PER_CALL = BATCH // 2
