"""Is a mail really from the address in its From? (RFC 8601, DMARC alignment).

The referee verifies nothing cryptographically itself: the operator's own mail
server checks DKIM, SPF and DMARC and records the results in an
``Authentication-Results`` header carrying its authserv-id. Only the topmost
such header with that id is trusted (a sender can forge any header below it),
and a malformed one counts as absent (Mailman #885). A pass counts only when
it is aligned with the From domain (RFC 7489 section 3.1, relaxed mode).

Pure functions: no I/O, no DNS, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import authres

#: The methods whose "fail" says a mail is not from its From domain.
FAILS = ("dmarc", "dkim", "spf")


@dataclass(frozen=True)
class Verdict:
    """What the trusted header says of a From domain.

    ``method`` names what passed (``dmarc``, ``dkim``, ``spf``), or is None;
    ``detail`` is the reason in words, for the operator's log and the reply.
    """

    method: str | None
    detail: str
    #: The trusted header says the mail is NOT from the From domain (a
    #: DMARC, DKIM or SPF fail, and no aligned pass): a forgery.
    failed: bool = False

    @property
    def passed(self) -> bool:
        return self.method is not None


def aligned(domain: str, from_domain: str) -> bool:
    """Relaxed alignment: the same domain, or one a subdomain of the other's
    organisational domain. Approximated without the public suffix list as
    "one ends with '.' + the other", which never aligns unrelated domains."""
    a, b = domain.lower().rstrip("."), from_domain.lower().rstrip(".")
    return bool(a) and (a == b or a.endswith("." + b) or b.endswith("." + a))


def trusted_results(
    values: Sequence[str], authserv_id: str
) -> authres.AuthenticationResultsHeader | None:
    """The topmost ``Authentication-Results`` (``values`` in header order) whose
    authserv-id is ours, parsed; None when there is none or it is malformed."""
    for value in values:
        try:
            header = authres.AuthenticationResultsHeader.parse_value(value)
        except Exception:  # authres raises SyntaxError and others on bad input
            if value.split(";", 1)[0].strip().lower() == authserv_id.lower():
                return None  # ours, but unreadable: treat as absent
            continue
        if str(header.authserv_id).lower() == authserv_id.lower():
            return header
    return None


def verify(values: Sequence[str], authserv_id: str, from_domain: str,
           also_trusted: str | None = None) -> Verdict:
    """Whether the trusted results show the mail is from ``from_domain``.

    ``also_trusted`` is a domain whose aligned DKIM pass is accepted as well:
    the configured game list's, which re-signs the mail it relays and so
    breaks the author's own signature (MAIL.md, ARC).
    """
    header = trusted_results(values, authserv_id)
    if header is None:
        return Verdict(None, f"no Authentication-Results from {authserv_id}")
    seen = []
    for result in header.results:
        method, outcome = str(result.method).lower(), str(result.result).lower()
        seen.append(f"{method}={outcome}")
        if outcome != "pass":
            continue
        for domain in _domains(result, method):
            if method == "dmarc":
                # DMARC vouches for the From domain it evaluated, and for no other.
                if domain.lower().rstrip(".") == from_domain.lower().rstrip("."):
                    return Verdict("dmarc", f"dmarc=pass for {domain}")
                continue
            if aligned(domain, from_domain):
                return Verdict(method, f"{method}=pass for {domain}")
            if method == "dkim" and also_trusted and aligned(domain, also_trusted):
                return Verdict(method, f"dkim=pass for the list's domain {domain}")
    failed = any(r.endswith("=fail") and r.split("=")[0] in FAILS for r in seen)
    return Verdict(None, ", ".join(seen) or "no results", failed)


def _domains(result: authres.AuthenticationResultBase, method: str) -> list[str]:
    """The domains a DMARC, DKIM or SPF pass vouches for."""
    wanted = {"dkim": ("header.d", "header.i"), "spf": ("smtp.mailfrom", "smtp.helo"),
              "dmarc": ("header.from",)}
    out = []
    for prop in result.properties or ():
        if f"{prop.type}.{prop.name}".lower() in wanted.get(method, ()):
            out.append(str(prop.value).rpartition("@")[2])
    return out
