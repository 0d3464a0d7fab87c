"""The database side (orm/): the engine and its pools, the driver's reads, the migrations."""
