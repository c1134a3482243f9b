"""``referee verify TAG``: the operator's audit of a game's draws, from its
seed, action log and the commitments its opening and deals published
(issue 23); and the seed kept out of every mail before the game's last."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from referee.cli import main
from referee.games.draws import seed_fingerprint
from tests.test_mail_counts import GAMES, Census
from tests.test_referee import REF


def config(root: Path) -> Path:
    path = root / "referee.toml"
    path.write_text(f'[referee]\naddress = "{REF}"\ndatabase = "sqlite:///{root / "ref.db"}"\n'
                    f'[mailbox]\nkind = "maildir"\npath = "{root / "in"}"\n'
                    f'[smtp]\nkind = "maildir"\npath = "{root / "out"}"\n')
    return path


@pytest.mark.parametrize("kind", ["goofspiel", "pure-skill", "miser", "spades", "loatcg"])
def test_a_whole_game_verifies_and_an_altered_seed_or_commitment_does_not(
        kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert kind in GAMES
    game = Census(kind, False, "all", tmp_path)
    try:
        game.play()
        tag = game.tag
        mails = sorted(game.mails(), key=lambda x: int(str(x["Message-ID"]).split(".")[1]))
    finally:
        game.club.referee.close()
    seed = f"census-{kind}"
    texts = [x.get_body().get_content() for x in mails]
    assert f"  seed-sha256: {seed_fingerprint(seed)}\n" in texts[0]
    # The census plays one round of Spades, and a tournament up to its
    # last week, before the Final Report: no game over, no seed told.
    over = kind not in ("spades", "loatcg")
    if not over:
        assert not any(f"seed: {seed}\n" in t for t in texts)
    if over:
        # The seed is told in the last mails alone, those of the game's end.
        told = [i for i, t in enumerate(texts) if f"  seed: {seed}\n" in t]
        assert told and min(told) >= len(texts) - 3
    assert not any(f"seed: {seed}\n" in t for t in texts[:-3])
    path = config(tmp_path)
    assert main(["-c", str(path), "verify", tag]) == 0
    # The census plays one round of Spades: its deal's fingerprints and the
    # next round's; a tournament publishes the hash of its instructions.
    commitments = {"spades": "2 commitments match", "loatcg": "1 commitment matches"}
    assert capsys.readouterr().out == (
        f"{tag}: the seed fingerprint matches; the replay matches; "
        f"{commitments.get(kind, '0 commitments match')}\nverified\n")
    with sqlite3.connect(tmp_path / "ref.db") as db:
        db.execute("UPDATE games SET seed = 'another'")
    assert main(["-c", str(path), "verify", tag]) == 1
    out = capsys.readouterr().out
    assert out == (f"{tag}: the opening's seed fingerprint {seed_fingerprint(seed)} is not "
                   f"SHA-256 of the stored seed ({seed_fingerprint('another')})\n")
    with sqlite3.connect(tmp_path / "ref.db") as db:
        db.execute("UPDATE games SET seed = ?", (seed,))
        db.execute("UPDATE events SET data = ? WHERE kind = 'seed'",
                   (json.dumps({"seed_sha256": "0" * 64}),))
    assert main(["-c", str(path), "verify", tag]) == 1
    assert "is not SHA-256 of the stored seed" in capsys.readouterr().out
    if kind == "spades":
        with sqlite3.connect(tmp_path / "ref.db") as db:
            db.execute("UPDATE events SET data = ? WHERE kind = 'seed'",
                       (json.dumps({"seed_sha256": seed_fingerprint(seed)}),))
            row_id, data = db.execute(
                "SELECT id, data FROM events WHERE kind = 'deal' ORDER BY id").fetchone()
            db.execute("UPDATE events SET data = ? WHERE id = ?",
                       (data.replace('"hand_sha256": {"', '"hand_sha256": {"x'), row_id))
        assert main(["-c", str(path), "verify", tag]) == 1
        assert "the commitment published at step 0 (deal) is not the replay's" in \
            capsys.readouterr().out
        # A deal's fingerprints taken out of the record: the replay makes them.
        with sqlite3.connect(tmp_path / "ref.db") as db:
            db.execute("DELETE FROM events WHERE id = ?", (row_id,))
        assert main(["-c", str(path), "verify", tag]) == 1
        assert capsys.readouterr().out == (
            f"{tag}: the replay makes a commitment at step 0 (deal) that the game did not "
            "publish\n")
        # A fact taken out of the stored state (the round's report) is a
        # difference too: it loads as none, the replay has one.
        with sqlite3.connect(tmp_path / "ref.db") as db:
            (state,) = db.execute("SELECT state FROM games").fetchone()
            db.execute("UPDATE games SET state = json_remove(state, '$.reports')")
        assert main(["-c", str(path), "verify", tag]) == 1
        assert capsys.readouterr().out == (
            f"{tag}: the stored state differs from the replay at state.reports: 1 items "
            "replayed, 0 stored\n")
        # Nor does an older edition hide the commitments: its replay deals
        # no salts, and the stored state holds them.
        with sqlite3.connect(tmp_path / "ref.db") as db:
            db.execute("UPDATE games SET state = json_set(?, '$.edition', 1)", (state,))
        assert main(["-c", str(path), "verify", tag]) == 1
        assert capsys.readouterr().out == (
            f"{tag}: the stored state differs from the replay at state.hand_salts: 0 items "
            "replayed, 4 stored\n")
    if kind == "loatcg":
        with sqlite3.connect(tmp_path / "ref.db") as db:
            db.execute("UPDATE events SET data = ? WHERE kind = 'seed'",
                       (json.dumps({"seed_sha256": seed_fingerprint(seed)}),))
            row_id, data = db.execute(
                "SELECT id, data FROM events WHERE kind = 'opening' ORDER BY id").fetchone()
            db.execute("UPDATE events SET data = ? WHERE id = ?",
                       (data.replace('"digest": "', '"digest": "0'), row_id))
        assert main(["-c", str(path), "verify", tag]) == 1
        assert "the commitment published at step 0 (opening) is not the replay's" in \
            capsys.readouterr().out
