"""The club of ``tests/test_referee.py``, on SQLite and on PostgreSQL."""

from tests.test_referee import club

__all__ = ["club"]
