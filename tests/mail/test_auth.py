"""Sender verification from our own server's Authentication-Results (RFC 8601)."""

from __future__ import annotations

import pytest

from referee.mail.auth import aligned, verify

MX = "mx.club.test"


@pytest.mark.parametrize(("domain", "from_domain", "expected"), [
    ("club.test", "club.test", True),
    ("mail.club.test", "club.test", True),  # relaxed alignment, RFC 7489 3.1
    ("club.test", "eu.club.test", True),
    ("badclub.test", "club.test", False),  # a suffix that is no subdomain
    ("evil.test", "club.test", False),
    ("", "club.test", False),
])
def test_alignment_is_relaxed_but_never_matches_an_unrelated_domain(
        domain: str, from_domain: str, expected: bool) -> None:
    assert aligned(domain, from_domain) is expected


def test_dmarc_pass_verifies() -> None:
    verdict = verify([f"{MX}; dmarc=pass (p=reject) header.from=club.test"], MX, "club.test")
    assert (verdict.passed, verdict.method) == (True, "dmarc")


def test_a_dkim_pass_counts_only_when_aligned_with_from() -> None:
    assert verify([f"{MX}; dkim=pass header.d=mail.club.test"], MX, "club.test").passed
    verdict = verify([f"{MX}; dkim=pass header.d=evil.test; spf=fail"], MX, "club.test")
    assert not verdict.passed
    assert verdict.detail == "dkim=pass, spf=fail"


def test_an_spf_pass_counts_when_the_envelope_sender_is_aligned() -> None:
    assert verify([f"{MX}; spf=pass smtp.mailfrom=alice@club.test"], MX, "club.test").passed
    assert not verify([f"{MX}; spf=pass smtp.mailfrom=bounce@evil.test"], MX,
                      "club.test").passed


def test_only_the_topmost_header_of_our_server_is_trusted() -> None:
    headers = [
        "filter.club.test; dkim=pass header.d=club.test",  # not our authserv-id
        f"{MX}; dkim=fail header.d=club.test",  # ours, prepended by our server
        f"{MX}; dmarc=pass",  # forged by the sender, below ours
    ]
    assert not verify(headers, MX, "club.test").passed


def test_no_header_of_ours_or_a_malformed_one_means_unverified() -> None:
    assert verify([], MX, "club.test").detail == f"no Authentication-Results from {MX}"
    assert not verify([f"{MX}; dkim=pass header.d=club.test"], "other.test", "club.test").passed
    malformed = [f"{MX}; dkim=pass (unclosed comment", f"{MX}; dmarc=pass"]
    assert verify(malformed, MX, "club.test").detail == f"no Authentication-Results from {MX}"


def test_the_lists_own_signature_counts_only_for_the_configured_list() -> None:
    relayed = [f"{MX}; dkim=pass header.d=lists.club.test; dmarc=fail"]
    assert not verify(relayed, MX, "gmail.example").passed
    verdict = verify(relayed, MX, "gmail.example", also_trusted="lists.club.test")
    assert (verdict.passed, verdict.method) == (True, "dkim")


def test_dmarc_pass_counts_only_for_the_from_domain_it_names() -> None:
    assert not verify([f"{MX}; dmarc=pass header.from=evil.test"], MX, "club.test").passed
    assert not verify([f"{MX}; dmarc=pass"], MX, "club.test").passed  # names no domain
    assert verify([f"{MX}; dmarc=pass header.from=Club.Test"], MX, "club.test").passed
