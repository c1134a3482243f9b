"""The lines a person typed (``referee/mail/quotes.py``): forward markers,
inline PGP armor, and attributions read in linear time, through
``parse_message``."""

from __future__ import annotations

import subprocess
import sys

from tests.mail.mails import REFEREE, parse, simple
from tests.mailstack import GIVE_UP, REPO_ROOT


def test_an_inline_forward_is_cut_at_its_marker() -> None:
    msg = parse(simple(body=b"""\
Referee, Gina asked me to pass this on.

---------- Forwarded message ---------
From: Gina Rossi <gina@example.org>
Date: Mon, 3 Jun 2024 at 09:00
Subject: my bid
To: Frank Li <frank@example.org>

bid 12
"""))
    assert msg.lines == ("Referee, Gina asked me to pass this on.",)


def test_inline_pgp_clearsigned_text_is_read_without_its_armor() -> None:
    msg = parse(simple(body=b"""\
-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA256

bid 11
- --\x20
Hana
-----BEGIN PGP SIGNATURE-----

iHUEARYIAB0WIQTlF1ClXh5Q6qg9n4n9q9cM5w0gBQJmXZ7A
=Jm3c
-----END PGP SIGNATURE-----
"""))
    assert msg.lines == ("bid 11",)


#: Run by the next test in a process of its own: for each mail on stdin (NUL
#: between them), the CPU seconds parse_message spends on it (best of three)
#: and its last line.
COSTS = f"""\
import sys, time
from referee.mail.inbound import parse_message
for raw in sys.stdin.buffer.read().split(b"\\0"):
    spent = []
    for _ in range(3):
        started = time.process_time()
        msg = parse_message(raw, referee_address={REFEREE!r})
        spent.append(time.process_time() - started)
    print(min(spent), msg.lines[-1])
"""


def test_lines_that_look_like_attributions_are_read_in_linear_time() -> None:
    # Nested ".*" in one regex made each such line cost backtracking cubic in its
    # length: this mail took 7 s to read, 700 times a plain mail of its size.
    # Its cost is weighed against that plain mail's in one process, so a busy
    # machine slows both alike; in a process of its own, so a regex that never
    # ends fails at the hang guard. What it costs: bench/worst_mail.py.
    crafted = ("On 1 " + "@ " * 190 + ":\n") * 2500 + "bid 5\n"  # under MAX_TEXT
    plain = ("I think " + "a " * 186 + "ok\n") * 2500 + "bid 5\n"
    mails = [simple(body=text.encode()).replace(b"\n", b"\r\n") for text in (crafted, plain)]
    done = subprocess.run([sys.executable, "-c", COSTS], input=b"\0".join(mails),
                          cwd=REPO_ROOT, capture_output=True, timeout=GIVE_UP, check=False)
    assert done.returncode == 0, done.stderr.decode()
    (cost, last), (plain_cost, plain_last) = (
        line.split(" ", 1) for line in done.stdout.decode().splitlines())
    assert (last, plain_last) == ("bid 5", "bid 5")
    assert float(cost) < 50 * float(plain_cost), (cost, plain_cost)
