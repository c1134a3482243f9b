"""Build outgoing mail: a template of ``templates/`` rendered to an EmailMessage.

A template's first line is ``Subject: ...``; the rest, after one blank line,
is the plain-text body. Player text only ever reaches a template as data, never
as template source. Headers follow MAIL.md: Auto-Submitted (RFC 3834),
X-Loop, threading (RFC 5322 §3.6.4) with a game root pseudo-reference, and a
Message-ID derived from the outbox row so a resend is the same message.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from base64 import b64encode
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from email.header import Header
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.mail import plain
from referee.mail.automation import OUR_MESSAGE_ID_PREFIX
from referee.mail.headers import one_line

if TYPE_CHECKING:
    from jinja2 import Environment

#: A subject echoed from a player's mail is cut to about this many characters:
#: a reply never grows with what it answers, and folding stays cheap.
ECHO_SUBJECT = 200
#: A message id we copy into In-Reply-To or References: printable ASCII, no
#: brackets inside, of a sane length; anything else is left out.
_SAFE_REF = re.compile(r"<[\x21-\x3b\x3d\x3f-\x7e]{1,250}>")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BLANK_LINES = re.compile(r"\n{3,}")

#: Inside the package (a link to the checkout's templates/ folder, copied into a wheel).
TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
#: What stands for the game tag in the Message-ID of a mail about no game.
NO_GAME = "referee-0"
_ID = re.compile(
    "^" + re.escape(OUR_MESSAGE_ID_PREFIX)
    + r"(\d+|game)\.([a-z][a-z0-9-]*-\d+)(?:\.([0-9a-f]{10}))?@(.+)$"
)


def echo_subject(subject: str) -> str:
    """A player's subject as our reply may repeat it: one line, capped."""
    text = one_line(subject)
    if len(text) <= ECHO_SUBJECT:
        return text
    return text[:ECHO_SUBJECT].rsplit(" ", 1)[0] + " …"


def _wrap_list(items: Sequence[Any], sep: str = ", ") -> str:
    return sep.join(str(i) for i in items)


class Composer:
    """Renders templates for one referee identity."""

    def __init__(self, address: str, name: str, templates: Path = TEMPLATES,
                 key: bytes = b"") -> None:
        self.address = address
        self.name = name
        self.domain = address.rpartition("@")[2]
        self.templates = templates
        #: Signs the outbox ids in our Message-IDs and VERP addresses, so a
        #: forged bounce cannot name a mail of ours (and mark its player).
        self.key = key
        self._envs: dict[str, Environment] = {}

    def mac(self, outbox_id: int) -> str:
        """The signature of an outbox id: 40 bits of HMAC-SHA256."""
        return hmac.new(self.key, str(outbox_id).encode(), hashlib.sha256).hexdigest()[:10]

    def verp_address(self, outbox_id: int) -> str:
        """The envelope sender of outbox row ``outbox_id`` (VERP): a bounce comes
        back to ``referee+bounce-N-MAC@domain`` and names the row, report or not."""
        local, _, domain = self.address.partition("@")
        return f"{local}+bounce-{outbox_id}-{self.mac(outbox_id)}@{domain}"

    def verp_outbox_id(self, recipient: str) -> int | None:
        """The outbox row a mail to ``recipient`` bounced from, when it is one
        of our signed VERP addresses; else None."""
        local, _, domain = self.address.lower().partition("@")
        m = re.fullmatch(re.escape(local) + r"\+bounce-(\d+)-([0-9a-f]{10})@" + re.escape(domain),
                         recipient.lower())
        if m is None or not hmac.compare_digest(m.group(2), self.mac(int(m.group(1)))):
            return None
        return int(m.group(1))

    def _env(self, folder: str) -> Environment:
        if folder not in self._envs:
            # Imported here: a pass with nothing to write needs no Jinja2.
            from jinja2 import (
                BaseLoader,
                ChoiceLoader,
                Environment,
                FileSystemLoader,
                PackageLoader,
                StrictUndefined,
            )

            from referee.games import GAMES

            # A game from a package of its own brings its mails in the
            # package (Game.templates_package); the common ones are shared.
            package = GAMES.templates_package(folder) if folder != "common" else ""
            own: BaseLoader = (PackageLoader(package, "templates") if package
                               else FileSystemLoader(self.templates / folder))
            env = Environment(
                loader=ChoiceLoader([own, FileSystemLoader(self.templates / "common")]),
                undefined=StrictUndefined,
                keep_trailing_newline=True,
                trim_blocks=True,
                lstrip_blocks=True,
                autoescape=False,
                # The templates ship with the referee (or its game's
                # package) and nothing edits them while it runs: no stat
                # of the file at every fetch to see if it changed.
                auto_reload=False,
            )
            env.filters["join_list"] = _wrap_list
            env.filters["when"] = format_when
            self._envs[folder] = env
        return self._envs[folder]

    def render(self, folder: str, template: str, context: Mapping[str, Any]) -> tuple[str, str]:
        """Render ``template`` to (subject, body). A template of a game
        package's that fails is its package's fault (``GAMES.guard``)."""
        from referee.games import GAMES

        with GAMES.guard(folder, f"its template {template}.txt"):
            text = self._env(folder).get_template(f"{template}.txt").render(
                referee=self.address, referee_name=self.name, **context
            )
            head, _, body = text.partition("\n")
            if not head.startswith("Subject:"):
                raise ValueError(f"template {folder}/{template}.txt must start with 'Subject:'")
        body = body.lstrip("\n")
        if "\n\n\n" in body:  # the search costs a tenth of a render; most have none
            body = _BLANK_LINES.sub("\n\n", body)
        body = body.rstrip() + "\n"
        # A name stored before names were cleaned may hold a control
        # character: a space in the subject, never a mail that cannot be made.
        return one_line(head.removeprefix("Subject:")), body

    def game_root(self, tag: str) -> str:
        return f"<{OUR_MESSAGE_ID_PREFIX}game.{tag}@{self.domain}>"

    def message_id(self, outbox_id: int, tag: str | None) -> str:
        return (f"<{OUR_MESSAGE_ID_PREFIX}{outbox_id}.{tag or NO_GAME}."
                f"{self.mac(outbox_id)}@{self.domain}>")

    def message(
        self,
        *,
        outbox_id: int,
        to: Sequence[tuple[str, str]],
        subject: str,
        body: str,
        tag: str | None,
        auto: str,
        in_reply_to: str | None = None,
        references: Sequence[str] = (),
        now: datetime,
        kind: str | None = None,
        reply_to: str | None = None,
        to_list: str | None = None,
        list_id: str | None = None,
    ) -> EmailMessage:
        """One outgoing mail. ``auto`` is ``auto-replied`` for answers to a
        player and ``auto-generated`` for reports and reminders (RFC 3834 §5).
        A post to the public list (``to_list``) has no Reply-To, so a reply
        to all reaches the list and the referee: a public answer stays
        public (RFC 2369's List-Post says where the list takes posts)."""
        msg = EmailMessage(policy=SMTP)
        msg["From"] = Address(self.name, addr_spec=self.address)
        msg["To"] = [Address(n, addr_spec=a) for a, n in to]
        set_subject(msg, subject)
        # Headers of ASCII the referee writes itself are set as they are:
        # parsing them into header objects was half the cost of a mail.
        for name, value, raw in self._headers(outbox_id, tag, auto, in_reply_to, references,
                                              now, kind, to_list, list_id):
            if raw:
                msg.set_raw(name, value)
            else:
                _set(msg, name, value)
            if name == "X-Auto-Response-Suppress" and not to_list:
                msg["Reply-To"] = Address(self.name, addr_spec=reply_to or self.address)
        msg.set_content(body, charset="utf-8", cte=plain.transfer_encoding(body))
        return msg

    def text(self, *, to: Sequence[tuple[str, str]], subject: str, body: str,
             reply_to: str | None = None, **kw: Any) -> str:
        """The text of :meth:`message` as it goes out (``as_bytes``, decoded
        from UTF-8), as the outbox stores it: written directly, whatever
        characters its names, subject and body hold."""
        head = [plain.address_header("From", [(self.name, self.address)]),
                plain.address_header("To", [(n, a) for a, n in to]),
                plain.raw_header("Subject", subject_value(subject))]
        for name, value, raw in self._headers(**kw):
            head.append(plain.raw_header(name, value) if raw or _plain_value(name, value)
                        else plain.parsed_header(name, value))
            if name == "X-Auto-Response-Suppress" and not kw.get("to_list"):
                head.append(plain.address_header("Reply-To",
                                                 [(self.name, reply_to or self.address)]))
        return plain.flatten(head, body)

    def _headers(self, outbox_id: int, tag: str | None, auto: str, in_reply_to: str | None,
                 references: Sequence[str], now: datetime, kind: str | None,
                 to_list: str | None = None,
                 list_id: str | None = None) -> list[tuple[str, str, bool]]:
        """The headers after the subject, in order: (name, value, whether the
        value is set as it is). Reply-To comes after X-Auto-Response-Suppress,
        but for a post to the list, which names the list instead."""
        out = [("Date", format_datetime(now.replace(tzinfo=UTC)), True),
               ("Message-ID", self.message_id(outbox_id, tag), False)]
        refs = [r for r in references if _SAFE_REF.fullmatch(r)]
        if in_reply_to and not _SAFE_REF.fullmatch(in_reply_to):
            in_reply_to = None
        if tag:
            refs = [self.game_root(tag), *[r for r in refs if r != self.game_root(tag)]]
        if in_reply_to:
            out.append(("In-Reply-To", in_reply_to, False))
            if in_reply_to not in refs:
                refs.append(in_reply_to)
        elif tag:
            out.append(("In-Reply-To", self.game_root(tag), False))
        if len(refs) > 10:  # first 4 and last 6, as Request Tracker trims them
            refs = refs[:4] + refs[-6:]
        if refs:
            # One id per line, as mail clients write it; Python would fold
            # before the first id and leave the first line empty.
            out.append(("References", "\n ".join(refs), True))
        out += [("Auto-Submitted", auto, False), ("X-Loop", self.address, False),
                ("Precedence", "bulk", True),
                ("X-Auto-Response-Suppress", "OOF, AutoReply", True)]
        if kind:
            # Which mail this is (template names), for players' filters;
            # folded here between words, so the first line is never empty.
            out.append(("X-Referee-Mail", _fold_words("X-Referee-Mail", kind), True))
        if to_list:
            # RFC 2919 and 2369: which list, and where a reply to the list
            # goes (mutt's list-reply, Thunderbird's Reply List).
            if list_id:
                out.append(("List-Id", f"<{list_id}>", False))
            out.append(("List-Post", f"<mailto:{to_list}>", False))
        return out

    def outbox_id(self, message_id: str) -> int | None:
        """The outbox row one of our own Message-IDs was made from."""
        m = _ID.match(message_id.strip("<>"))
        if m is None or m.group(4) != self.domain or not m.group(1).isdigit():
            return None
        if not hmac.compare_digest(m.group(3) or "", self.mac(int(m.group(1)))):
            return None  # not signed by us: a forged or an old id names no mail
        return int(m.group(1))

    def tag_from_ids(self, ids: Sequence[str]) -> str | None:
        """The game tag named by one of our own Message-IDs among ``ids``."""
        for mid in reversed(ids):
            m = _ID.match(mid.strip("<>"))
            if m and m.group(4) == self.domain and m.group(2) != NO_GAME:
                return m.group(2)
        return None


def _plain_value(name: str, value: str) -> bool:
    """Whether a header value is set as it is: short plain ASCII, what
    parsing it would give back."""
    return value.isascii() and value.isprintable() and len(name) + len(value) < 76


def _fold_words(name: str, value: str, width: int = 78) -> str:
    """``value``, ASCII words, folded between words into lines of at most
    ``width`` characters, the header's name on the first line counted."""
    lines = [""]
    room = width - len(name) - 2
    for word in value.split():
        if lines[-1] and len(lines[-1]) + 1 + len(word) > room:
            lines.append("")
            room = width - 1
        lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    return "\n ".join(lines)


def _set(msg: EmailMessage, name: str, value: str) -> None:
    """Set a header the referee wrote: as it is when it is short plain ASCII,
    else through the header registry."""
    if _plain_value(name, value):
        msg.set_raw(name, value)
    else:
        msg[name] = value


def set_subject(msg: EmailMessage, subject: str) -> None:
    """Set ``Subject`` so that every reader decodes exactly ``subject``
    (see :func:`subject_value`)."""
    msg.set_raw("Subject", subject_value(subject))


def subject_value(subject: str) -> str:
    """The ``Subject`` header's value, as it is set: every reader decodes
    exactly ``subject``.

    Python's header folder, moving a non-ASCII word to a new line, leaves the
    space before the fold as well, so the unfolded subject shows two spaces.
    The ASCII words up to the first non-ASCII one stay plain, so filters on the
    raw header still see the game tag; the rest goes in encoded-words, whose
    folds vanish on decoding (RFC 2047 section 6.2).
    """
    if _CONTROL.search(subject):
        raise ValueError("a subject must be one line, without control characters")
    if subject.isascii():
        # Folded by us, between words: Python folds a subject of 70 to 78
        # characters right after "Subject:", and readers then see it begin
        # with a space.
        return _fold_ascii(subject, len("Subject: "))
    words = subject.split(" ")
    first = next(i for i, w in enumerate(words) if not w.isascii())
    direct = _encoded_subject(words, first)
    if direct is not None:
        return direct
    header = Header(header_name="Subject")
    if first:
        header.append(" ".join(words[:first]), "us-ascii")
    header.append(" ".join(words[first:]), "utf-8")
    return header.encode()


#: A byte of UTF-8 text as RFC 2047's "Q" encoding writes it in a header
#: (section 4.2, and the ``email`` package's choice of safe characters):
#: letters, digits and ``-!*+/`` as they are, a space as ``_``, else ``=XX``.
_Q = [chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "-!*+/")
      else "_" if b == 0x20 else f"={b:02X}" for b in range(256)]
#: An encoded-word's frame (``=?utf-8?q?`` and ``?=``), and the most a line
#: holding them holds: 78, as ``email.header.Header`` folds (``MAXLINELEN``),
#: so that the subject is written byte for byte as it wrote it.
_FRAME, _LINE = len("=?utf-8?q??="), 78


def _encoded_subject(words: list[str], first: int) -> str | None:
    """The subject of ``words`` (split at single spaces; ``words[first]`` the
    first non-ASCII one) written directly, byte for byte as the ``email``
    package's ``Header.encode`` wrote it: the ASCII words before it as they
    are, the rest in encoded-words of UTF-8, "Q" (or one "B" word where that
    is shorter), on lines of at most 78 characters, split between
    characters, never inside one.
    Readers decode exactly the subject: the space between the plain words
    and the first encoded-word is kept, the folds between encoded-words
    vanish (RFC 2047 section 6.2), and the spaces inside them are ``_``.
    None where the ``email`` package is asked instead: plain words that do
    not fit the first line beside an encoded-word, or an empty one (two
    spaces, or a space first), whose whitespace a reader might fold away.
    (Python's ``Header.encode`` cost a tenth of a mail's CPU.)"""
    prefix = " ".join(words[:first])
    if first and not all(words[:first]):
        return None
    room = _LINE - len("Subject: ") - (len(prefix) + 1 if first else 0) - _FRAME
    if room < 12:  # a character of four bytes might not fit: no empty word
        return None
    rest = " ".join(words[first:])
    try:
        data = rest.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the package's way
        return None
    whole = data.decode("latin-1").translate(_Q)
    head = f"{prefix} " if first else ""
    if -(-len(data) // 3) * 4 < len(whole):
        # Base64 is shorter (the package's choice then): one encoded-word,
        # as the package writes it, else the package's way.
        if -(-len(data) // 3) * 4 > room:
            return None
        return f"{head}=?utf-8?b?{b64encode(data).decode('ascii')}?="
    if len(whole) <= room:  # most subjects: one encoded-word
        return f"{head}=?utf-8?q?{whole}?="
    codes = [_Q[o] if (o := ord(c)) < 0x80 else "".join(_Q[b] for b in c.encode("utf-8"))
             for c in rest]
    lines: list[str] = []
    word: list[str] = []
    used = 0
    for code in codes:
        if used + len(code) > room:
            lines.append(f"=?utf-8?q?{''.join(word)}?=")
            word, used, room = [], 0, _LINE - 1 - _FRAME
        word.append(code)
        used += len(code)
    lines.append(f"=?utf-8?q?{''.join(word)}?=")
    return head + "\n ".join(lines)


def _fold_ascii(text: str, used: int, width: int = 78) -> str:
    """``text`` folded at its spaces so that no line passes ``width`` where
    it can be helped (RFC 5322 §2.2.3); unfolding gives ``text`` back."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        room = width - (used if not lines else 0)
        if line and len(line) + 1 + len(word) > room:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n ".join(lines)


def format_when(value: datetime | str | None) -> str:
    """A deadline as players read it: ``Wed 25 Nov 2026 18:00 UTC``."""
    if value is None:
        return "no deadline"
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.strftime("%a %d %b %Y %H:%M UTC")
