"""The service tests share the club of ``tests/test_referee.py``: a referee
on Maildir and SQLite, and on PostgreSQL where one answers."""

from tests.test_referee import club

__all__ = ["club"]
