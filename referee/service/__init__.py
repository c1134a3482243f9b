"""The service: mail in, games refereed, mail out. The only package that
opens database transactions. Wings along a mail's path, arrows one
way: ``intake`` (a mail to its game) uses ``club`` (the games the club
starts by mail: open tables), ``play`` (the game changed by the rules) and
``outgoing`` (the mail it causes); ``club`` uses ``play`` and ``outgoing``;
``play`` uses ``outgoing``; ``outgoing`` uses neither. ``core`` (the door), ``reading``, ``pages``,
``health``, ``lease`` and ``errors`` sit at the root; ``docs/architecture.md``
draws them.
"""

from referee.service.core import Referee
from referee.service.errors import RefereeError
from referee.service.intake.letter import Outcome
from referee.service.play.operator import parse_player
from referee.store.db import now_utc

__all__ = ["Outcome", "Referee", "RefereeError", "now_utc", "parse_player"]
