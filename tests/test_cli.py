"""The command line, in process: config errors, the pass lock, status."""

from __future__ import annotations

import fcntl
import json
import re
import shutil
from pathlib import Path

import pytest

from referee.cli import main
from referee.config import load_config
from referee.problems import EX_CANTCREAT, EX_CONFIG, EX_TEMPFAIL, EX_UNAVAILABLE

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A referee set up with ``init`` on its embedded default: a Maildir in
    and out, SQLite."""
    path = tmp_path / "referee.toml"
    path.write_text(
        '[referee]\naddress = "referee@club.test"\n'
        '[mailbox]\nkind = "maildir"\npath = "in"\n'
        '[smtp]\nkind = "maildir"\npath = "out"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(path), "init"]) == 0
    return path


def test_the_example_config_documents_keys_that_load(tmp_path: Path) -> None:
    shutil.copy(ROOT / "config.example.toml", tmp_path / "referee.toml")
    config = load_config(tmp_path / "referee.toml")
    assert config.referee.lock_file == Path("referee.lock")
    assert config.deadlines.default.days == 3


def test_a_bad_config_stops_at_start_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "referee.toml"
    path.write_text('[referee]\naddress = "referee"\n[deadlines]\ndefault = "soon"\n')
    assert main(["--config", str(path), "status"]) == EX_CONFIG
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "referee.address: 'referee' is not a mail address" in err
    assert "deadlines.default: 'soon' is not a duration" in err


def test_a_poll_that_finds_another_pass_running_does_nothing(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", str(config), "game", "new", "--at-once", "goofspiel",
                 "--player", "alice@club.test", "--player", "bob@club.test"]) == 0
    capsys.readouterr()
    with open(config.parent / "referee.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["--config", str(config), "poll"]) == EX_TEMPFAIL
        assert "this pass did nothing" in capsys.readouterr().err
        assert main(["--config", str(config), "run"]) == 1
        assert "another referee holds" in capsys.readouterr().err
    assert main(["--config", str(config), "-v", "poll"]) == 0
    assert capsys.readouterr().out.startswith("read 0 message(s), processed 0")


def test_a_game_started_while_the_daemon_runs_leaves_the_opening_to_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with open(config.parent / "referee.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["--config", str(config), "game", "new", "--at-once", "goofspiel",
                     "--player", "alice@club.test", "--player", "bob@club.test"]) == 0
    assert not (config.parent / "out" / "new").exists() or not any(
        (config.parent / "out" / "new").iterdir())
    assert main(["--config", str(config), "-v", "poll"]) == 0
    assert re.search(r"sent [1-9]", capsys.readouterr().out)  # the opening (one or a copy each)


def test_status_json_names_whose_move_it_is(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["--config", str(config), "game", "new", "--at-once", "goofspiel",
          "--player", "Alice <alice@club.test>", "--player", "bob@club.test"])
    capsys.readouterr()
    assert main(["--config", str(config), "status", "--json"]) == 0
    (game,) = json.loads(capsys.readouterr().out)
    assert game["tag"] == "goofspiel-1" and game["status"] == "active"
    assert sorted(d["name"] for d in game["deadlines"]) == ["Alice", "Bob"]


def test_the_operator_resigns_a_player_extends_deadlines_and_cancels_a_game(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = ["--config", str(config)]
    main([*cli, "game", "new", "--at-once", "pure-skill", "--player", "Alice <alice@club.test>",
          "--player", "bob@club.test", "--player", "carol@club.test"])
    assert main([*cli, "game", "resign", "pure-skill-1", "carol@club.test"]) == 0
    assert "pure-skill-1: a bot now plays Carol's seat" in capsys.readouterr().out
    assert main([*cli, "game", "extend", "pure-skill-1", "--by", "soon"]) == 1
    assert "--by: 'soon' is not a duration" in capsys.readouterr().err
    assert main([*cli, "game", "extend", "pure-skill-1", "--by", "1d12h"]) == 0
    assert "2 deadline(s) moved 1 day 12 hours later" in capsys.readouterr().out
    assert main([*cli, "game", "cancel", "pure-skill-1", "--reason", "Testing."]) == 0
    assert main([*cli, "status", "pure-skill-1", "--json"]) == 0
    (game,) = json.loads(capsys.readouterr().out.split("\n", 1)[1])  # after "cancelled"
    assert game["status"] == "cancelled" and game["players"][2]["bot"]
    assert main([*cli, "game", "cancel", "pure-skill-1"]) == 1
    assert "pure-skill-1 is cancelled; there is nothing to do" in capsys.readouterr().err


def test_a_pass_is_refused_by_the_database_lease_when_the_lock_file_is_gone(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tmp cleaner deleted the daemon's lock file: the database still says
    a pass is running, so a cron pass does nothing."""
    from datetime import timedelta

    from referee.config import load_config
    from referee.service import Referee, now_utc
    from referee.service.lease import Lease

    assert main(["--config", str(config), "init"]) == 0
    daemon = Referee(load_config(config))
    lease = Lease(daemon.sessions)
    assert lease.acquire()
    (config.parent / "referee.lock").unlink(missing_ok=True)
    capsys.readouterr()
    assert main(["--config", str(config), "poll"]) == EX_TEMPFAIL
    assert "pass lease" in capsys.readouterr().err
    # A lease its holder stopped renewing (a crashed daemon) expires.
    assert not Lease(daemon.sessions).acquire(now_utc() + timedelta(seconds=60))
    assert Lease(daemon.sessions).acquire(now_utc() + timedelta(minutes=3))
    lease.release()
    daemon.close()


def test_a_database_that_does_not_answer_is_one_line_and_exit_69(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "referee.toml"
    path.write_text('[referee]\naddress = "referee@club.test"\n'
                    'database = "postgresql+psycopg://nobody@127.0.0.1:1/none"\n')
    assert main(["--config", str(path), "poll"]) == EX_UNAVAILABLE
    err = capsys.readouterr().err
    assert err.startswith("referee: [referee] database: postgresql+psycopg://nobody@127.0.0.1:"
                          "1/none: the server does not answer (") and err.count("\n") == 1


def _sent(config: Path) -> list[str]:
    """The mails delivered to the sink, in the order they were delivered.

    A Maildir name is ``SECONDS.M<microseconds>P<pid>Q<count>.host`` with the
    microseconds unpadded, so the names do not sort by time as text.
    """
    folder = config.parent / "out" / "new"
    if not folder.exists():
        return []

    def delivered(path: Path) -> tuple[int, ...]:
        match = re.match(r"(\d+)\.M(\d+)P\d+Q(\d+)", path.name)
        assert match, path.name
        return tuple(int(n) for n in match.groups())

    return [p.read_text() for p in sorted(folder.iterdir(), key=delivered)]


def test_a_player_is_readdressed_and_the_table_is_told(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = ["--config", str(config)]
    main([*cli, "game", "new", "--at-once", "goofspiel", "--player", "Alice <alice@club.test>",
          "--player", "bob@club.test"])
    before = len(_sent(config))
    capsys.readouterr()
    assert main([*cli, "player", "readdress", "alice@club.test", "alice@new.test"]) == 0
    assert capsys.readouterr().out == "Alice now gets mail at alice@new.test; told goofspiel-1\n"
    told = _sent(config)[before:]
    assert told and all("Subject: [goofspiel-1] Alice has a new mail address" in t
                        for t in told)
    to = " ".join(line for t in told for line in t.splitlines() if line.startswith("To:"))
    assert "alice@new.test" in to and "bob@club.test" in to and "alice@club.test" not in to
    assert main([*cli, "status", "--json"]) == 0
    (game,) = json.loads(capsys.readouterr().out)
    assert game["players"][0]["address"] == "alice@new.test"
    assert main([*cli, "player", "readdress", "alice@new.test", "bob@club.test"]) == 1
    assert "bob@club.test is already a player's address." in capsys.readouterr().err
    assert main([*cli, "player", "rotate", "Alice <alice@new.test>"]) == 0


def test_prune_drops_bodies_and_inbound_records_of_games_that_ended_long_ago(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import mailbox
    from email.message import EmailMessage

    cli = ["--config", str(config)]
    for _ in range(2):
        main([*cli, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
              "--player", "bob@club.test", "--now", "2026-01-01T09:00:00"])
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "alice@club.test", "referee@club.test", "[goofspiel-1]"
    msg["Message-ID"] = "<a1@club.test>"
    msg.set_content("bid 3")
    mailbox.Maildir(config.parent / "in", create=True).add(msg)
    assert main([*cli, "poll", "--now", "2026-01-01T10:00:00"]) == 0
    assert main([*cli, "game", "cancel", "goofspiel-1", "--now", "2026-01-02T09:00:00"]) == 0
    capsys.readouterr()
    assert main([*cli, "prune", "--older-than", "180d", "--now", "2026-03-01T00:00:00"]) == 0
    assert capsys.readouterr().out.startswith("pruned 0 sent mail body(ies) and 0 inbound")
    assert main([*cli, "prune", "--older-than", "180d", "--now", "2026-08-01T00:00:00"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"pruned [1-9]\d* sent mail body\(ies\) and 1 inbound record\(s\) of games "
                    r"that ended more than 25 weeks 5 days ago\n", out), out
    assert main([*cli, "replay", "goofspiel-1"]) == 0  # the action log is whole
    assert main([*cli, "prune", "--older-than", "2"]) == 1
    assert "--older-than: '2' needs a unit, like 2d or 2h" in capsys.readouterr().err


def test_a_mail_to_a_cancelled_game_does_not_bring_its_deadlines_back(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import mailbox
    from email.message import EmailMessage

    cli = ["--config", str(config)]
    main([*cli, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
          "--player", "bob@club.test"])
    assert main([*cli, "game", "cancel", "goofspiel-1"]) == 0
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "alice@club.test", "referee@club.test", "[goofspiel-1]"
    msg["Message-ID"] = "<late@club.test>"
    msg.set_content("bid 3")
    mailbox.Maildir(config.parent / "in", create=True).add(msg)
    assert main([*cli, "poll"]) == 0
    capsys.readouterr()
    assert main([*cli, "status", "--json"]) == 0
    (game,) = json.loads(capsys.readouterr().out)
    assert game["status"] == "cancelled" and game["deadlines"] == []


def test_demo_refuses_a_folder_it_did_not_make_and_names_the_kinds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "club"
    mine.mkdir()
    (mine / "referee.toml").write_text("[referee]\n")
    assert main(["demo", "--dir", str(mine)]) == 1
    assert "the folder has files the demo did not make" in capsys.readouterr().err
    assert (mine / "referee.toml").exists()
    assert main(["demo", "chess"]) == 1
    err = capsys.readouterr().err
    assert err == ("referee: demo: unknown game kind 'chess'; known: goofspiel, loatcg, miser, "
                   "pure-skill, spades\n")
    demo = tmp_path / "demo"
    assert main(["demo", "--dir", str(demo)]) == 0
    assert main(["demo", "--dir", str(demo)]) == 0  # an earlier demo's folder is emptied
    assert "Final result of goofspiel-1" in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["spades", "miser", "goofspiel"])
def test_a_demo_shows_the_game_and_ends_saying_where_its_mail_and_pages_are(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = tmp_path / "demo"
    assert main(["demo", kind, "--dir", str(demo)]) == 0
    out = capsys.readouterr().out
    title = {"spades": "Spades", "miser": "Miser", "goofspiel": "Goofspiel"}[kind]
    # The game as its readers got it: the opening and the reports, whole.
    assert f"{title} begins" in out and "GAME OVER" in out
    assert len(out.splitlines()) > 100
    last = out.splitlines()[-2:]
    assert last[0].startswith(f"Its mail: {demo / 'outbox'}, a Maildir, one file a mail")
    assert last[1] == (f"Its pages: {demo / 'pages' / 'index.html'} (open it in a browser); "
                       f"to write them again: referee --config {demo / 'referee.toml'} pages")
    assert (demo / "pages" / "index.html").is_file()
    assert main(["--config", str(demo / "referee.toml"), "pages"]) == 0
    assert capsys.readouterr().out == f"1 game page(s) and index.html written to {demo / 'pages'}\n"


def test_replay_says_whether_it_matches_the_stored_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    demo = tmp_path / "demo"
    assert main(["demo", "--dir", str(demo)]) == 0
    path = demo / "referee.toml"
    path.write_text('[referee]\naddress = "referee@demo.example"\n'
                    '[mailbox]\npath = "inbox"\n[smtp]\npath = "outbox"\n')
    capsys.readouterr()
    assert main(["-c", str(path), "replay", "goofspiel-1"]) == 0
    assert capsys.readouterr().out.endswith(
        "goofspiel-1: the replay matches the stored state\n")
    with sqlite3.connect(demo / "referee.db") as db:
        state = json.loads(db.execute("SELECT state FROM games").fetchone()[0])
        state["round"] += 1
        db.execute("UPDATE games SET state = ?", (json.dumps(state),))
    assert main(["-c", str(path), "replay", "goofspiel-1"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert re.fullmatch(r"goofspiel-1: the replay differs from the stored state at "
                        r"state\.round: replayed 6, stored 7", last), last


def test_a_duration_needs_a_unit_and_has_a_maximum(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = ["--config", str(config)]
    assert main([*cli, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
                 "--player", "bob@club.test", "--option", "deadline=2"]) == 1
    assert "Option deadline: '2' needs a unit, like 2d or 2h" in capsys.readouterr().err
    main([*cli, "game", "new", "--at-once", "goofspiel", "--player", "alice@club.test",
          "--player", "bob@club.test"])
    capsys.readouterr()
    assert main([*cli, "game", "extend", "goofspiel-1", "--by", "2"]) == 1
    assert "--by: '2' needs a unit, like 2d or 2h" in capsys.readouterr().err
    assert main([*cli, "game", "extend", "goofspiel-1", "--by", "400d"]) == 1
    assert "--by: '400d' must be more than nothing and at most 366 days" in \
        capsys.readouterr().err


def test_init_names_the_key_when_the_databases_folder_is_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Following the README, `init` ran before the state folder existed and
    said "the database is busy or away ... try again", exit 75."""
    path = tmp_path / "referee.toml"
    path.write_text('[referee]\naddress = "referee@club.test"\n'
                    f'database = "sqlite:///{tmp_path}/state/referee.db"\n', encoding="utf-8")
    assert main(["--config", str(path), "init"]) == EX_CANTCREAT
    err = capsys.readouterr().err
    assert err == (f"referee: the database's folder {tmp_path}/state does not exist "
                   "([referee] database); create it, writable by the referee's user\n")
    (tmp_path / "state").mkdir()
    assert main(["--config", str(path), "init"]) == 0


def test_pages_take_the_time_they_were_written_from_now(
        config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(config), "pages", str(tmp_path / "www"),
                 "--now", "2026-03-04T09:30:00Z"]) == 0
    assert "0 game page(s) and index.html written to" in capsys.readouterr().out
    index = (tmp_path / "www" / "index.html").read_text(encoding="utf-8")
    assert "As of Wed 04 Mar 2026 09:30 UTC." in index
    assert "<updated>2026-03-04T09:30:00Z</updated>" in (tmp_path / "www" / "index.atom").read_text(
        encoding="utf-8")


def test_referee_games_explains_every_option_of_the_built_in_games(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`referee games --json`: each built-in kind with its options, every
    option with a default and a line saying what it does."""
    import json

    from referee.cli import main

    assert main(["games", "--json"]) == 0
    listed = {g["kind"]: g for g in json.loads(capsys.readouterr().out)}
    assert {"goofspiel", "pure-skill", "spades", "miser", "loatcg"} <= set(listed)
    for kind in ("goofspiel", "pure-skill", "spades", "miser", "loatcg"):
        options = listed[kind]["options"]
        assert "bot" in options, kind
        unexplained = [name for name, o in options.items() if not o["help"]]
        assert unexplained == [], kind
