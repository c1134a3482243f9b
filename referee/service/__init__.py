"""The service: mail in, games refereed, mail out. The only package that
opens database transactions; ``docs/architecture.md`` maps its rooms."""

from referee.service.common import Outcome, RefereeError, now_utc, parse_player
from referee.service.core import Referee

__all__ = ["Outcome", "Referee", "RefereeError", "now_utc", "parse_player"]
