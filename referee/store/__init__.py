"""The store: the tables (``models``) and the database engine, its sessions
and its migrations (``db``). It makes the session factory; only the
service opens sessions."""
