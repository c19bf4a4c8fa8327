"""The database: which one to use, the embedded server, the pool, roles and migrations."""
