"""Game of Pure Skill (rule text 000): the sealed-bid engine of ``referee.games.bidding``."""

from referee.games.bidding import PureSkill

__all__ = ["PureSkill"]
