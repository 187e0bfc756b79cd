"""The index: domain objects into SQLite. The only package that runs SQL."""
