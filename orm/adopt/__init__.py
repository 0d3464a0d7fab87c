"""Adopting a database the Discours backend created (`discours adopt`), in place.

The Discours backend (Feb 2025) creates its tables from its models at start and never migrates them, so its
database differs from ours in shape (hidden `id` columns inside composite keys, unbounded VARCHAR, NULL where
ours requires a value, other names for a few columns and for every constraint) and in some data (duplicate
natural keys, retired reaction kinds, notifications in another form). The adopter:

1. reads the database and says what it is (`database.read`): ours (nothing to adopt), Discours', empty,
   or something it does not recognise;
2. makes a plan (`plan.make_plan`): for each of our tables, what is copied as it is, what is filled, merged
   or converted, by which documented rule (`transfers.py`, `notifications.py`), and every blocker (a value
   longer than our column, a reference to a missing row, an unknown kind, column or table);
3. carries it out (`run.adopt`) in one transaction: the Discours tables are moved to a schema of their
   own, our schema is made by our own migrations up to `ADOPTED_AT` on the emptied `public`, the rows are
   copied through the rules, sequences are set past the ids, and the old tables are dropped. The database
   is then exactly what `discours migrate` makes, stamped at `ADOPTED_AT`; later migrations run through the
   normal history. A failure anywhere rolls everything back.
"""

# The revision a Discours database is adopted at; the history goes on from here as for any database.
ADOPTED_AT = "0007"
# Where the Discours tables wait while the transaction copies them (dropped before it commits).
LEGACY = "discours_legacy"
