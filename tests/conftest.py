"""Shared pytest fixtures.  Keep the logic of each fixture in its own helper module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.mailstack import MailStack, session_stack

# Hypothesis times each example (200 ms) and the drawing of its data by
# default: a busy machine would fail them. No test asserts a duration; a
# test's own @settings keeps these unless it names them.
settings.register_profile("suite", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


@pytest.fixture(scope="session")
def mailstack() -> Iterator[MailStack]:
    """Private Postfix + Dovecot on 127.0.0.1, one per session (see tests/mailstack.py).

    Skips the test if it cannot be started, or fails if CI / REFEREE_REQUIRE_MAILSTACK is set.
    """
    yield from session_stack()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Tests using the mail stack get the "mailstack" marker: `-m "not mailstack"` skips them.
    for item in items:
        if "mailstack" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.mailstack)
