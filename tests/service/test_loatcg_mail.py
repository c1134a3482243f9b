"""The Land of Agora tournament (rule text 002) through the service: who
gets which mail (definition F, rules 9 and 10), joining by mail, and the
Dealor's timetable fired by the deadline sweep. The embedded default:
Maildir in and out, SQLite; ``tests/test_e2e_loatcg.py`` runs a tournament
over the real Postfix and Dovecot.

The club's mail server vouches for every sender, so a stranger's join
seats them at once; a join that nothing vouches for waits for a reply to
a confirmation (``tests/service/intake/test_join_confirmation.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from referee.games.loatcg.instructions import CARD_TYPES, EXAMPLE_INSTRUCTIONS, parse_instructions
from referee.service.outgoing.queue import SECRET_NOTE
from referee.store import models as m
from tests.test_referee import REF, SIGNATURE, T0, Club, body
from tests.test_spades_mail import kind, section, sections

LIST = "players@club.test"
ANN, BEN, CAT = "Ann <ann@club.test>", "Ben <ben@club.test>", "Cat <cat@club.test>"
DAN = "Dan <dan@club.test>"
#: The club's mail server, whose Authentication-Results the referee trusts.
MX = "mx.club.test"
DAY = timedelta(days=1)
ENGLISH = [i.english() for i in parse_instructions(EXAMPLE_INSTRUCTIONS)]


@pytest.fixture
def club(tmp_path: Path) -> Iterator[Club]:
    c = Club(tmp_path, public_list=LIST, auth={"authserv_id": MX}, vouch=True)
    yield c
    c.referee.close()


def tournament(club: Club, *players: str, bots: int = 0, seed: str = "t",
               options: dict[str, str] | None = None) -> str:
    tag = club.referee.operator.create_game("loatcg", list(players), bots=bots, now=T0, seed=seed,
                                            options=options or {})
    club.poll(T0)
    return tag


def state(club: Club, tag: str) -> dict[str, Any]:
    return dict(club.referee.reading.stored_state(tag))


def hand_of(club: Club, tag: str, name: str) -> dict[str, int]:
    return next(mb["hand"] for mb in state(club, tag)["members"] if mb["name"] == name)


def set_hands(club: Club, tag: str, **hands: dict[str, int]) -> None:
    """Give the named members exactly these cards (a test's setup)."""
    with club.referee.sessions.begin() as db:
        game = db.scalar(select(m.Game).where(m.Game.tag == tag))
        assert game is not None
        data = dict(game.state)
        members = [dict(mb) for mb in data["members"]]
        for mb in members:
            if mb["name"].lower() in hands:
                mb["hand"] = {t: hands[mb["name"].lower()].get(t, 0) for t in CARD_TYPES}
        game.state = {**data, "members": members}


def addressed(msg: EmailMessage) -> str:
    return str(msg["To"])


def kinds(mails: list[EmailMessage]) -> list[tuple[str, str]]:
    """(template, To) of each mail, in the order sent."""
    return [(kind(x), addressed(x)) for x in mails]


def test_a_stranger_deals_themselves_in_by_mail_to_the_referee_alone(club: Club) -> None:
    tag = tournament(club, ANN)
    club.send(ANN, "mail all", subject=f"[{tag}] every mail")  # to read the join whole
    club.poll(T0)
    club.send(DAN, "Hello!\n\ndeal me in\n", subject="may I play?")
    mails = club.poll(T0 + DAY)
    # A join is posted to the list (the README: "the list hears it"), which
    # Ann reads. Dan, in mail turns (a list game's default), gets one mail:
    # his answer as a line, then his cards.
    assert kinds(mails) == [("joined", LIST), ("table transcript dealt", DAN)]
    joined, dans = mails
    assert joined["Subject"] == f"[{tag}] Dan deals emself in"
    assert body(joined).startswith(
        "Dan deals emself in and draws 5 cards (rule 3). The cards\nare dealt secretly.\n\n"
        "Members: Ann, Dan.\n")
    assert body(dans).startswith(SECRET_NOTE)  # it shows his cards
    assert "Since your last mail:\n  You: deal me in (done)\n\n" in body(dans)
    hand = hand_of(club, tag, "Dan")
    assert sum(hand.values()) == 5
    dealt = section(dans, "Cards dealt to you (secret)")
    dealt_text = dealt.split("Dealt to you: ")[1].splitlines()[0]
    assert dealt_text not in body(joined)
    assert "SECRET: it went to you alone" in dealt
    with club.referee.sessions() as db:
        seats = db.scalars(select(m.Seat).order_by(m.Seat.position))
        assert [(s.position, s.name, s.player.address if s.player else None) for s in seats] == [
            (1, "Ann", "ann@club.test"), (2, "Dan", "dan@club.test")]
    # The join runs through the usual command path: logged, and replayable.
    assert club.referee.reading.replay(tag) == state(club, tag)


def test_a_stranger_asking_to_be_dealt_in_anywhere_in_a_mail_joins(club: Club) -> None:
    tag = tournament(club, ANN)
    club.send("Frank Fisher <ffisher@club.test>", "Hi all,\n\nIs it too late? deal me in, "
              "please\n\nFrank\n", subject="the card game")
    mails = club.poll(T0 + DAY)
    # The join to the list; one mail to Frank: his answer as a line (mail
    # turns, a list game's default), then his cards.
    assert kinds(mails) == [("joined", LIST),
                            ("table transcript dealt", "Frank Fisher <ffisher@club.test>")]
    assert mails[0]["Subject"] == f"[{tag}] Frank Fisher deals emself in"
    assert ("Since your last mail:\n  You: Is it too late? deal me in, please (done)\n\n"
            ) in body(mails[1])
    assert "the Dealor deals you 5 cards (rule 3)" in section(mails[1], "Cards dealt to you")
    assert [mb["name"] for mb in state(club, tag)["members"]] == ["Ann", "Frank Fisher"]
    assert state(club, tag)["members"][1]["aliases"] == ["ffisher"]


def test_a_stranger_who_writes_something_else_is_told_how_to_join(club: Club) -> None:
    tag = tournament(club, ANN)
    club.send(DAN, "Hello, what is this game about?", subject="hi")
    (answer,) = club.poll(T0 + DAY)
    assert answer["X-Referee-Mail"] == "stranger" and addressed(answer) == DAN
    assert answer["Subject"] == f"How to join [{tag}]"
    assert body(answer) == f"""\
Hello,

This is Club Referee, a robot that referees games played by email.
Your address sits in no game here, so your mail changed nothing.

Anyone may join the Land of Agora tournament [{tag}].
To join, write

  deal me in

in a mail to {REF} or to the list {LIST}.

This note is sent at most once a day.

{SIGNATURE}"""
    assert [mb["name"] for mb in state(club, tag)["members"]] == ["Ann"]


def test_a_quoted_deal_me_in_joins_nobody(club: Club) -> None:
    tag = tournament(club, ANN)
    club.send(DAN, "Sounds like fun.\n\nOn Monday, Ann wrote:\n> deal me in\n> Ann\n",
              subject=f"Re: [{tag}] the tournament")
    (answer,) = club.poll(T0 + DAY)
    assert answer["X-Referee-Mail"] == "stranger"
    assert "  deal me in\n" in body(answer)
    assert [mb["name"] for mb in state(club, tag)["members"]] == ["Ann"]


def test_a_stranger_is_told_of_every_game_open_to_join(club: Club) -> None:
    one, two = tournament(club, ANN), tournament(club, BEN, seed="u")
    club.send(DAN, "hello", subject="hi")
    (answer,) = club.poll(T0 + DAY)
    assert answer["Subject"] == "How to join"
    assert f"""\
Anyone may join these games. Write the line shown, with the game's tag
in the subject, in a mail to {REF} or to the list
{LIST}:
  [{one}] Land of Agora tournament: write "deal me in"
  [{two}] Land of Agora tournament: write "deal me in"

For example:
  Subject: [{one}] deal me in
""" in body(answer)


def test_an_offer_names_a_member_as_people_do(club: Club) -> None:
    lee, bob = "Ann Lee <ann@club.test>", "Bob Baker <bbaker@club.test>"
    tag = tournament(club, lee, bob, "Ann Moss <amoss@club.test>")
    set_hands(club, tag, **{"ann lee": {"wool": 4}, "bob baker": {"steel": 2}})
    club.send(lee, "offer 2 wool for 1 steel to Bob\noffer 1 wool for 1 steel to bbaker",
              subject=f"[{tag}] steel", to=LIST)
    # The list's one post of the two offers, each to Bob Baker, however
    # named; Ann Lee's answer, that both were made, is a line of her next
    # mail (mail turns).
    (post,) = club.poll(T0 + DAY)
    assert addressed(post) == LIST
    for number, give in ((1, 2), (2, 1)):
        offer = section(post, f"Offer {number}: Ann Lee gives {give} wool for 1 steel")
        assert "It may be accepted by Bob Baker." in offer
    club.send(bob, "accept 1", subject=f"[{tag}] yes", to=LIST)
    club.poll(T0 + DAY)
    assert hand_of(club, tag, "Bob Baker")["wool"] == 2
    club.send(bob, "offer 1 steel for 1 wool to Ann", subject=f"[{tag}] more", to=LIST)
    (reply,) = club.poll(T0 + DAY)
    assert ("REFUSED (offer 1 steel for 1 wool to Ann): 'Ann' could be Ann Lee or Ann Moss: "
            "write the whole name.") in body(reply)
    club.send(bob, "offer 1 steel for 1 wool to Zed", subject=f"[{tag}] more", to=LIST)
    (reply,) = club.poll(T0 + DAY)
    assert ("REFUSED (offer 1 steel for 1 wool to Zed): There is no Member 'Zed'. You may "
            "name Ann Lee, Bob Baker or Ann Moss.") in body(reply)


def test_a_join_on_the_list_names_the_game_by_its_tag_and_other_games_are_untouched(
        club: Club) -> None:
    tag = tournament(club, ANN)
    other = club.referee.operator.create_game("goofspiel", [ANN, BEN], now=T0, seed="g")
    club.poll(T0)
    # A stranger writing to the goofspiel game still gets the stranger answer.
    club.send(DAN, "deal me in", subject=f"[{other}] me too")
    (answer,) = club.poll(T0 + DAY)
    assert answer["X-Referee-Mail"] == "stranger" and addressed(answer) == DAN
    # A stranger writing no join command gets it too.
    club.send("Eve <eve@club.test>", "hand", subject=f"[{tag}] hi")
    (answer,) = club.poll(T0 + DAY)
    assert answer["X-Referee-Mail"] == "stranger"
    # With two games running, the join to the list says which by its tag.
    club.send("Cat <cat@club.test>", "deal me in", subject=f"[{tag}] count me in", to=LIST)
    mails = club.poll(T0 + DAY)
    # The list hears the join; one mail to Cat: her answer, her cards.
    assert kinds(mails) == [("joined", LIST), ("table transcript dealt", CAT)]
    assert "Cards dealt to you (secret)" in [h for h, _ in sections(mails[1])]
    assert state(club, tag)["members"][-1]["name"] == "Cat"
    assert [mb["name"] for mb in state(club, tag)["members"]] == ["Ann", "Cat"]


def test_a_former_member_joining_again_gets_nothing(club: Club) -> None:
    tag = tournament(club, ANN, BEN)
    club.send(ANN, "deal me in", subject=f"[{tag}] again")
    (reply,) = club.poll(T0 + DAY)
    assert "REFUSED (join): You are a Member already" in body(reply)
    club.send(ANN, "resign", subject=f"[{tag}] bye")
    club.poll(T0 + DAY)
    before = hand_of(club, tag, "Ann")
    club.send(ANN, "deal me in", subject=f"[{tag}] back")
    # No deal; the join is posted to the list, which every member reads
    # (Ann's answer too: it only says her join was done).
    (post,) = club.poll(T0 + DAY)
    assert addressed(post) == LIST and body(post).startswith(
        "Ann deals emself in again and draws nothing: only a person who has\n"
        "never been a Member draws cards (rule 3).\n\nMembers: Ann (bot), Ben, Ann.\n")
    members = {mb["name"]: mb for mb in state(club, tag)["members"]}
    assert sum(members["Ann"]["hand"].values()) == 0 and not members["Ann"]["bot"]
    assert members["Ann (bot)"]["bot"] and members["Ann (bot)"]["hand"] == before
    assert club.referee.reading.replay(tag) == state(club, tag)
    assert club.poll(T0 + 2 * DAY) == []  # no digest repeats what the list said
    # Another person of the same name is told apart by a number.
    club.send("Ann <ann@else.test>", "deal me in", subject=f"[{tag}] me too")
    club.poll(T0 + 2 * DAY)
    with club.referee.sessions() as db:
        seats = db.scalars(select(m.Seat).where(m.Seat.game_id == 1).order_by(m.Seat.position))
        assert [(s.name, s.bot, s.player.address) for s in seats] == [
            ("Ann (bot)", True, "ann@club.test"), ("Ben", False, "ben@club.test"),
            ("Ann", False, "ann@club.test"), ("Ann 2", False, "ann@else.test")]
    assert club.referee.reading.replay(tag) == state(club, tag)


def test_a_private_execution_that_leaves_out_a_party_is_refused(club: Club) -> None:
    tag = tournament(club, ANN, BEN, CAT)
    set_hands(club, tag, ann={"ore": 1}, ben={"wool": 1})
    club.send(ANN, "offer 1 ore for 1 wool", subject=f"[{tag}] offer", to=LIST)
    mails = club.poll(T0 + DAY)
    # The list has the offer; Ann's answer, that it was made, is a line of
    # her next mail (mail turns).
    assert kinds(mails) == [("offer", LIST)]
    club.send(BEN, "accept 1", subject=f"[{tag}] deal", cc="cat@club.test")
    (reply,) = club.poll(T0 + DAY)
    assert addressed(reply) == BEN
    assert ("REFUSED (execute 1): A private execution must include every party (rule 10): "
            "copy Ann, or execute it publicly.") in body(reply)
    assert hand_of(club, tag, "Ann")["ore"] == 1 and hand_of(club, tag, "Ben")["wool"] == 1
    assert [o["number"] for o in state(club, tag)["offers"]] == [1]


def test_a_trade_confirmation_goes_to_exactly_the_executions_audience(club: Club) -> None:
    tag = tournament(club, ANN, BEN, CAT)
    set_hands(club, tag, ann={"ore": 1}, ben={"wool": 1}, cat={"ore": 1})
    club.send(ANN, "offer 1 ore for 1 wool", subject=f"[{tag}] offer", to=LIST)
    club.send(CAT, "offer 1 ore for 1 steel", subject=f"[{tag}] offer", to=LIST)
    club.poll(T0 + DAY)
    # Private, with the maker copied: Ann and Ben are told, separately; nobody else.
    club.send(BEN, "accept 1", subject=f"[{tag}] deal", cc="ann@club.test")
    mails = club.poll(T0 + DAY)
    # One mail each; private, not secret (ruling TCG-15). Ann's offer was
    # answered by the list's post of it, so no line saying it was done
    # waits for her: her mail is the trade alone.
    assert kinds(mails) == [("trade", ANN), ("table transcript trade", BEN)]
    trade = ("Ben executes offer 1 of Ann: 1 ore\nfor 1 wool (rule 10).\n\n"
             "The trade succeeded: Ann gives 1 ore to Ben,\nand Ben gives 1 wool to Ann.\n"
             "(Private: this answer goes to Ann, Ben, who saw the request.)\n\n"
             "Round 1 of 8 is under way. Next: Round Report 1, due Mon 09 Mar 2026 12:00 UTC.")
    assert body(mails[0]) == f"{trade}\n\n{SIGNATURE}"
    assert body(mails[1]) == (
        "Since your last mail:\n  You: accept 1 (done)\n\n"
        f"Trade 1 done (private)\n{'-' * 22}\n{trade}\n\n{SIGNATURE}")
    assert [x["Subject"] for x in mails] == [f"[{tag}] Trade 1 done (private)",
                                             f"[{tag}] Land of Agora tournament"]
    assert hand_of(club, tag, "Ann") == {**dict.fromkeys(CARD_TYPES, 0), "wool": 1}
    # Public, failing: the list hears who failed, only the failing party why.
    club.send(ANN, "accept 2", subject=f"[{tag}] deal", to=LIST)
    mails = club.poll(T0 + DAY)
    assert kinds(mails) == [("trade", LIST), ("table transcript trade_failed", ANN)]
    public = body(mails[0])
    assert "Ann did not meet the conditions" in public
    assert "Cat did not" not in public and "steel" not in public.split("did not meet")[1]
    why = section(mails[1], "Why trade 2 failed (secret)")
    assert "1 steel" in why and "SECRET" in why
    assert str(mails[1]["Subject"]).endswith(" (secret)")
    # Her answer says the trade failed, never that her "accept" was done.
    assert "FAILED (execute 2): Trade 2 failed" in body(mails[1])
    assert "(done)" not in body(mails[1])


def test_a_reveal_paid_for_publicly_is_delivered_secretly(club: Club) -> None:
    tag = tournament(club, ANN, BEN)
    set_hands(club, tag, ann={"apple": 3})
    club.send(ANN, "buy random", subject=f"[{tag}] a reveal please", to=LIST)
    mails = club.poll(T0 + DAY)
    # The list hears of the purchase; Ann's answer and the reveal are one
    # mail to her alone, marked secret.
    assert kinds(mails) == [("purchase", LIST), ("table transcript reveal", ANN)]
    revealed = state(club, tag)["members"][0]["known"]
    assert len(revealed) == 1
    text = ENGLISH[revealed[0] - 1]
    headline = f"Scoring Instruction {revealed[0]} (secret)"
    assert str(mails[1]["Subject"]).endswith(" (secret)")
    assert f"\n  {revealed[0]}. {text}\n" in section(mails[1], headline)
    assert "Ann discards 3 apples for the Dealor to reveal a randomly-chosen Scoring " \
           "Instruction to em secretly." in " ".join(body(mails[0]).split())
    # Only the reveal shows it: not the list's post, not the answer's line.
    assert text not in " ".join(body(mails[0]).split())
    for head, part in sections(mails[1]):
        assert head == headline or text not in " ".join(part.split())
    assert hand_of(club, tag, "Ann")["apple"] == 0


def test_the_dealors_round_report_fires_from_the_sweep_at_day_seven(club: Club) -> None:
    tag = tournament(club, ANN, BEN)
    deadlines = club.referee.reading.status(tag)[0]["deadlines"]
    assert [d["what"] for d in deadlines] == ["Round Report 1"]
    assert club.poll(T0 + 7 * DAY - timedelta(minutes=1)) == []
    (report,) = club.poll(T0 + 7 * DAY)
    assert kinds([report]) == [("round_report", LIST)]
    assert report["Subject"].startswith(f"[{tag}] Round Report 1")
    (due,) = club.referee.reading.status(tag)[0]["deadlines"]
    assert due["what"] == "Round Report 2"
    assert due["due_at"].startswith((T0 + 14 * DAY).date().isoformat())
    with club.referee.sessions() as db:
        (log,) = db.scalars(select(m.ActionLog))
        assert (log.seat, log.action["verb"], log.source) == (0, "report", "timeout")
    # Report 2 deals 3 cards to each member, each in a secret mail (rule 7).
    mails = club.poll(T0 + 14 * DAY)
    assert kinds(mails) == [("round_report", LIST), ("dealt", ANN), ("dealt", BEN)]


def test_bot_members_act_once_a_day_from_the_sweep_and_get_no_mail(club: Club) -> None:
    # Random bots, which never offer a trade to a person: a sensible bot may
    # make one offer publicly (tests/games/test_bots.py).
    tag = tournament(club, ANN, bots=2, seed="bots", options={"bot": "random"})
    status = club.referee.reading.status(tag)[0]
    assert sorted(d["name"] for d in status["deadlines"]) == ["Bot 2", "Bot 3", "the referee"]
    assert club.poll(T0 + DAY - timedelta(minutes=1)) == []
    mails = club.poll(T0 + DAY)
    with club.referee.sessions() as db:
        logged = [(a.seat, a.source) for a in db.scalars(select(m.ActionLog))]
    assert logged == [(2, "bot"), (3, "bot")]
    # A bot owes nothing, so it acts quietly, on its own hand: nobody is mailed.
    assert mails == []
    for day in range(2, 8):
        mails = club.poll(T0 + day * DAY)
        assert [mail["X-Referee-Mail"] for mail in mails] == (["round_report"] if day == 7 else [])
    # A bot's turn is nobody's deadline in the players' mail: the report's
    # next due date is the Dealor's.
    assert "The next Round Report (Round Report 2) is due Mon 16 Mar 2026 12:00 UTC." \
        in body(mails[0])
    with club.referee.sessions() as db:
        sources = [a.source for a in db.scalars(select(m.ActionLog))]
    assert sources.count("bot") == 14 and sources.count("timeout") == 1
    assert state(club, tag)["reports"][0]["number"] == 1
    assert club.referee.reading.replay(tag) == state(club, tag)


def test_game_new_reads_the_instructions_file_and_names_a_bad_line(
        club: Club, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from referee.cli import main

    toml = tmp_path / "referee.toml"
    toml.write_text(
        f'[referee]\naddress = "{REF}"\ndatabase = "{club.config.referee.database}"\n'
        f'public_list = "{LIST}"\n'
        f'[mailbox]\nkind = "maildir"\npath = "{tmp_path / "in"}"\n'
        f'[smtp]\nkind = "maildir"\npath = "{tmp_path / "out"}"\n', encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_text("1. points ore 1\n2. points wol 2\n", encoding="utf-8")
    assert main(["-c", str(toml), "game", "new", "--at-once", "loatcg", "--instructions",
                 str(bad)]) == 1
    err = capsys.readouterr().err
    assert err == ("referee: instructions: line 2: 'wol' is not a card type; the types are "
                   "ore, wool, lumber, apple, diamond, steel, paper, fabric (or basic, refined, "
                   "all)\n")
    good = tmp_path / "good.txt"
    good.write_text("1. points ore 1\n2. points wool 2\n", encoding="utf-8")
    assert main(["-c", str(toml), "game", "new", "--at-once", "loatcg", "--instructions", str(good),
                 "--option", "report_days=5", "--now", "2026-03-02T12:00"]) == 0
    assert capsys.readouterr().out == "loatcg-1\n"
    (opening,) = club.new_mail()
    assert "2 Scoring Instructions" in str(opening["Subject"]) and addressed(opening) == LIST
    assert state(club, "loatcg-1")["members"] == []
    assert state(club, "loatcg-1")["report_days"] == 5


#: A Hand Score told in a mail: "Your Hand Score: 4 points", "score is 4",
#: "Scores: Ann 4, Ben 11", "scores Ann 4" (as status or history would write
#: them), or a report's table ("  Ann: 4").
SCORE_TOLD = re.compile(
    r"(?im)\bscores?\b[ \t]*(?:is|was|of|:)[ \t]*-?\d"
    r"|\bscores?\b[^\n.]*\b(?:Ann|Ben|Dan|Bot \d)\b[ \t]+-?\d"
    r"|^[ \t]+(?:Ann|Ben|Dan|Bot \d):[ \t]*-?\d")
#: The parts of mails that tell Hand Scores (ruling TCG-22), by their
#: headlines: the Round Reports, the Final Report, and the 3 cards dealt
#: each round (rule 7).
TELLS_SCORES = ("Round Report ", "Final Report")


def parts(mails: list[EmailMessage]) -> list[tuple[str, str]]:
    """Each part of each mail, as (headline, text): a mail of one part is
    its subject and text, a mail of several each part under its headline."""
    return [part for mail in mails for part in sections(mail)]


def rule_7_deal(headline: str, text: str) -> bool:
    return headline.startswith("Cards dealt to you") and (
        "deals each Member 3 cards (rule 7)" in " ".join(text.split()))


def test_tcg_22_a_hand_score_is_told_only_in_the_reports_and_the_deal_of_rule_7(
        club: Club) -> None:
    """Ruling TCG-22: a member learns Hand Scores only in the Round Reports,
    in the deal of rule 7 (eir own) and in the Final Report. Not on
    joining, not in any answer to a command (``hand`` shows the cards, a
    ``score`` is refused saying where scores are told), not in a deal of a
    draw, a reveal or a failed trade or take, and not on the game page or
    in ``status`` but as a report published them."""
    tag = tournament(club, ANN, BEN, bots=1, seed="scores")
    mails = club.poll(T0)
    club.send(DAN, "deal me in", subject=f"[{tag}] me too")
    mails += club.poll(T0 + DAY)
    set_hands(club, tag, ann={"apple": 9, "ore": 2, "lumber": 1, "wool": 1},
              ben={"ore": 1, "diamond": 1})
    # The failed take comes last: a failed line stops the moves after it (MI-19).
    club.send(ANN, "hand\nscore\nhelp\nstatus\nhistory\nresend\ndraw\n"
                   "buy random\ncraft steel\ndiscard wool\ntake fabric", subject=f"[{tag}] probing")
    mails += club.poll(T0 + DAY)
    club.send(BEN, "offer 1 diamond for 1 steel", subject=f"[{tag}] steel?", to=LIST)
    club.send(DAN, "accept 1\nmy score", subject=f"[{tag}] yes", to=LIST)
    mails += club.poll(T0 + 2 * DAY)
    # Ann's answer heads the one mail her probing brought her, with all it
    # caused for her (her hand, what was resent, dealt, revealed).
    answers = [x for x in mails if "transcript" in kind(x).split() and addressed(x) == ANN]
    assert "REFUSED (score): The Dealor tells Hand Scores only in the Round Reports (rule 5), " \
           "with the 3 cards dealt each round (rule 7) and in the Final Report (rule 6); " \
           "'hand' shows your cards." in " ".join(section(answers[0], "Your mail").split())
    assert "Your hand (secret)" in [h for h, _ in sections(answers[0])]
    told = {k for x in mails for k in kind(x).split()}
    assert {"transcript", "joined", "dealt", "hand", "resent", "reveal",
            "take_failed", "craft", "discard", "offer", "trade", "trade_failed"} <= told
    # No report is out yet: no mail and no status tells any score.
    for mail in mails:
        assert not SCORE_TOLD.search(body(mail)), (mail["X-Referee-Mail"], body(mail))
        assert "Hand Score:" not in body(mail)
    assert club.referee.reading.status(tag)[0]["scores"] == {}
    # The reports and the deal of rule 7 tell them; the rest still does not.
    mails = club.poll(T0 + 7 * DAY) + club.poll(T0 + 14 * DAY)
    club.send(ANN, "hand\nscore\nhelp\ndraw", subject=f"[{tag}] again")
    mails += club.poll(T0 + 15 * DAY)
    for day in (21, 28, 35, 42, 49, 56):
        mails += club.poll(T0 + day * DAY)
    assert state(club, tag)["frozen"]
    # Each part on its own: a report or a deal of rule 7 may share a mail
    # with parts that must not tell a score.
    reports = [t for h, t in parts(mails) if h.startswith(TELLS_SCORES)]
    assert len(reports) == 8 and all(SCORE_TOLD.search(t) for t in reports)
    deals = [t for h, t in parts(mails) if rule_7_deal(h, t)]
    assert len(deals) == 3 * 6  # Ann, Ben, Dan after reports 2 to 7; bots get no mail
    for deal in deals:
        assert re.search(r"\nYour Hand Score: -?\d+ points?\.\n", deal)
    for headline, text in parts(mails):
        if not headline.startswith(TELLS_SCORES) and not rule_7_deal(headline, text):
            assert not SCORE_TOLD.search(text), (headline, text)
    published = state(club, tag)["final_scores"]
    assert club.referee.reading.status(tag)[0]["scores"] == dict(published)


def test_an_extension_lists_the_dealors_next_report_and_no_bots_turn(club: Club) -> None:
    tag = tournament(club, ANN, bots=1, seed="away")
    club.send(ANN, "away 2d", subject=f"[{tag}] travelling")
    mails = club.poll(T0 + DAY)
    (extended,) = [x for x in mails if x["X-Referee-Mail"] == "extended"]
    assert addressed(extended) == LIST
    lines = [line for line in body(extended).splitlines() if "now due" in line]
    assert lines == ["  the referee          Round Report 1, now due Wed 11 Mar 2026 12:00 UTC"]
