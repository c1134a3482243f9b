"""The lines a person typed in a mail's text, as commands are read from
them: quotes, attributions ("On ... wrote:"), signatures, forwards and
Outlook's quoted header block left out, an inline PGP signature's armor
undone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Lines of one mail's text examined for commands, whatever its size: at
#: most ``commands.MAX_LINES`` (100) command lines are read.
MAX_BODY_LINES = 20_000

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))

# "On Mon, 3 Jun 2024 at 10:00, Referee <x@y> wrote:" and its translations;
# a date or an address must be in it, so "On reflection I wrote:" is prose.
# German, Dutch and Scandinavian put the author after the verb. Read in two
# steps (verb, then what comes before it) rather than one regex, whose nested
# ".*" took seconds per crafted line.
_WROTE_LAST = re.compile(
    r"\s(?:wrote|a écrit|escribió|ha scritto|escreveu|napisał|написал|het volgende geschreven)"
    r"\s*:$",
    re.IGNORECASE,
)
_WROTE_BEFORE_AUTHOR = re.compile(r"\s(?:schrieb|schreef|skrev)\b", re.IGNORECASE)
_ATTRIBUTION_START = re.compile(r"(?:on|le|am|el|il|op|em|den|w dniu)\s", re.IGNORECASE)
_ATTRIBUTION_MAX = 400  # characters; a longer line is prose
_CUT_MARKERS = re.compile(
    r"^(?:-{2,}\s*(?:original message|ursprüngliche nachricht|message d'origine"
    r"|mensaje original|messaggio originale|oorspronkelijk bericht"
    r"|forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado"
    r"|messaggio inoltrato|doorgestuurd bericht)\s*-{2,}"
    r"|begin forwarded message:|anfang der weitergeleiteten nachricht:"
    r"|début du message réexpédié\s?:"
    r"|_{20,}"  # Outlook's separator line, and a mailing list's footer
    r")$",
    re.IGNORECASE,
)
_MOBILE_SIGNATURE = re.compile(
    r"^(?:sent from my \S.*|sent from (?:outlook|yahoo mail|mail for windows|proton mail)\b.*"
    r"|sent with proton mail\b.*|get outlook for \S.*|von meinem \S.* gesendet"
    r"|envoyé de mon \S.*|enviado desde mi \S.*|enviado do meu \S.*|inviato da(?:l mio)? \S.*"
    r"|(?:verzonden|verstuurd) (?:met|vanaf) (?:mijn )?\S.*|skickat från min \S.*"
    r"|obtenir outlook pour \S.*|obtener outlook para \S.*"
    r"|outlook (?:für|voor) (?:android|ios)\b.*(?:herunterladen|downloaden))$",
    re.IGNORECASE,
)
# Outlook's plain header block: "From: ..." then "Sent: ..." or "Date: ...",
# each on its line, or run onto one line by a client that rewrapped it.
_FROM_LABEL = r"(?:from|von|de|da|van|från|fra|od)\s?:"
_WHEN_LABEL = (
    r"(?:sent|date|gesendet|datum|envoyé|enviado|fecha|inviato|data|verzonden|skickat|sendt)\s?:"
)
_SUBJECT_LABEL = r"(?:subject|betreff|objet|asunto|oggetto|onderwerp|ämne|emne|assunto)\s?:"
_HEADER_FROM = re.compile(rf"^{_FROM_LABEL}\s*\S", re.IGNORECASE)
_HEADER_WHEN = re.compile(rf"^{_WHEN_LABEL}", re.IGNORECASE)
_HEADER_RUN_ON = re.compile(
    rf"^{_FROM_LABEL}\s*\S.*?\s{_WHEN_LABEL}.*?\s{_SUBJECT_LABEL}", re.IGNORECASE
)


def _clean(line: str) -> str:
    return line.translate(_INVISIBLE).replace("\xa0", " ").strip()


def command_lines(text: str) -> tuple[str, ...]:
    """The lines a person typed, without quotes, attributions, signatures and forwards.

    Reading stops at a signature separator, a mobile signature, a forward or
    "Original Message" marker, Outlook's header block and separator line, a
    list footer's line of underscores, or after :data:`MAX_BODY_LINES` lines.

    A quote introduced by ``On ... wrote:`` and marked with ``>`` is skipped
    rather than cut, so bottom-posted and interleaved answers (Thunderbird's
    default) keep their commands; an attribution followed by unmarked text
    ends the reply, as everything below it is the original.
    """
    # Only the first MAX_BODY_LINES lines are looked at: split no further.
    head = text.split("\n", MAX_BODY_LINES)[:MAX_BODY_LINES]
    lines = _clearsigned([_clean(line) for line in head])
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line or line.startswith(">"):
            i += 1
            continue
        if line == "--" or _CUT_MARKERS.match(line) or _MOBILE_SIGNATURE.match(line):
            break
        if _HEADER_FROM.match(line) and (
            any(_HEADER_WHEN.match(n) for n in lines[i + 1 : i + 5])
            or _HEADER_RUN_ON.match(line[:_ATTRIBUTION_MAX])
        ):
            break
        span = _attribution_span(lines, i)
        if span:
            if not _next_text(lines, i + span).startswith(">"):
                break
            i += span
            continue
        kept.append(line)
        i += 1
    return tuple(kept)


def _attribution_span(lines: Sequence[str], i: int) -> int:
    """How many lines (1 to 3) an attribution starting at ``i`` spans, or 0.

    An attribution without a date or an address counts only above a quote.
    """
    joined = ""
    for k in range(i, min(i + 3, len(lines))):
        if not lines[k] or lines[k].startswith(">"):
            break
        joined = f"{joined} {lines[k]}".strip()
        if len(joined) > _ATTRIBUTION_MAX:  # also bounds the regex's backtracking
            break
        if joined.endswith(":") and _is_attribution(joined, _next_text(lines, k + 1)):
            return k - i + 1
    return 0


def _is_attribution(text: str, below: str) -> bool:
    """Whether ``text``, ending in ":", says who wrote what follows (``below``).

    Without a date or an address ("Goofspiel Referee wrote:") only when a
    quote follows.
    """
    verb = _WROTE_LAST.search(text) or _WROTE_BEFORE_AUTHOR.search(text)
    if verb is None or not verb.start():
        return False
    head = text[: verb.start()]
    start = _ATTRIBUTION_START.match(head)
    if "@" in head or (start and any(c.isdigit() for c in head[start.end() :])):
        return True
    return below.startswith(">")


def _next_text(lines: Sequence[str], start: int) -> str:
    """The first non-empty line from ``start`` on, or ""."""
    return next((lines[k] for k in range(start, len(lines)) if lines[k]), "")


def _clearsigned(lines: list[str]) -> list[str]:
    """The signed text of an inline PGP message (RFC 4880 §7), or ``lines`` as they are."""
    try:
        start = lines.index("-----BEGIN PGP SIGNED MESSAGE-----")
    except ValueError:
        return lines
    body = start + 1
    while body < len(lines) and lines[body]:  # armor headers ("Hash: SHA256")
        body += 1
    end = next(
        (k for k in range(body, len(lines)) if lines[k] == "-----BEGIN PGP SIGNATURE-----"),
        len(lines),
    )
    return [line[2:] if line.startswith("- ") else line for line in lines[body:end]]
