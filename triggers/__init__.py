"""SQLAlchemy event listeners that turn committed writes into cache invalidations (see listeners.py)."""
