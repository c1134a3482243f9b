"""Smoke tests of the private mail stack: SMTP in, IMAP out, list alias, refusals."""

from __future__ import annotations

import smtplib
import uuid
from email.message import EmailMessage

import pytest

from tests.mailstack import PLAYERS, MailStack


def _message(stack: MailStack, sender: str, to: str, subject: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = stack.address(sender)
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{uuid.uuid4().hex}@{stack.domain}>"
    msg.set_content("join game 1\n")
    return msg


def test_smtp_to_referee_arrives_over_imap(mailstack: MailStack) -> None:
    mailstack.clear("referee")
    msg = _message(mailstack, "alice", mailstack.address("referee"), "hello referee")
    refused = mailstack.send(msg, mailstack.address("alice"), [mailstack.address("referee")])
    assert refused == {}

    [got] = mailstack.wait_for("referee", 1)
    assert got["Subject"] == "hello referee"
    assert got["Message-ID"] == msg["Message-ID"]
    # IMAP hands out the message as stored, with CRLF line endings
    assert got.get_content() == "join game 1\r\n"
    # fetched with BODY.PEEK[]: still unseen, and fetching again sees it again
    assert len(mailstack.fetch_all("referee")) == 1
    with mailstack.imap("referee") as imap:
        imap.select_folder("INBOX", readonly=True)
        assert imap.search("UNSEEN") != []


def test_raw_bytes_are_sent_as_is(mailstack: MailStack) -> None:
    mailstack.clear("bob")
    raw = (
        b"From: carol@example.test\r\nTo: bob@example.test\r\nSubject: raw\r\n"
        b"X-Test: kept\r\n\r\nmove e2e4\r\n"
    )
    mailstack.send(raw, "carol", "bob")
    [got] = mailstack.wait_for("bob", 1)
    assert got["X-Test"] == "kept"
    assert "move e2e4" in got.get_content()


def test_list_alias_reaches_all_players_and_referee(mailstack: MailStack) -> None:
    members = [*PLAYERS, "referee"]
    for user in members:
        mailstack.clear(user)
    mailstack.clear("list-owner")
    msg = _message(mailstack, "alice", mailstack.list_address, "public move")
    mailstack.send(msg, mailstack.address("alice"), mailstack.list_address)

    for user in members:  # the sender (alice) gets its own copy too
        [got] = mailstack.wait_for(user, 1)
        assert got["Message-ID"] == msg["Message-ID"]
    assert mailstack.count("list-owner") == 0


def test_other_domains_are_refused_at_rcpt(mailstack: MailStack) -> None:
    with pytest.raises(smtplib.SMTPRecipientsRefused) as info:
        mailstack.send(b"Subject: x\r\n\r\nx\r\n", "referee", ["someone@elsewhere.test"])
    [(code, text)] = info.value.recipients.values()
    assert 500 <= code < 600, text

    # with an accepted recipient beside it, smtplib reports the refusal without raising
    refused = mailstack.send(
        b"Subject: x\r\n\r\nx\r\n", "referee", ["someone@elsewhere.test", "dave"]
    )
    assert list(refused) == ["someone@elsewhere.test"]
    assert 500 <= refused["someone@elsewhere.test"][0] < 600


def test_unknown_local_user_is_refused(mailstack: MailStack) -> None:
    with pytest.raises(smtplib.SMTPRecipientsRefused) as info:
        mailstack.send(b"Subject: x\r\n\r\nx\r\n", "referee", ["nobody@example.test"])
    [(code, _)] = info.value.recipients.values()
    assert code == 550


def test_plus_address_lands_in_inbox(mailstack: MailStack) -> None:
    mailstack.clear("referee")
    to = mailstack.address("referee", "tok")
    assert to == "referee+tok@example.test"
    mailstack.send(_message(mailstack, "erin", to, "secret reply"), mailstack.address("erin"), to)
    [got] = mailstack.wait_for("referee", 1)
    assert got["Subject"] == "secret reply"
    assert got["Delivered-To"] == to


def test_null_sender_is_accepted(mailstack: MailStack) -> None:
    mailstack.clear("referee")
    mailstack.send(b"Subject: bounce\r\n\r\nundeliverable\r\n", "", "referee")
    [got] = mailstack.wait_for("referee", 1)
    assert got["Return-Path"] == "<>"
