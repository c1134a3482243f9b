"""Goofspiel (rule text 003): the sealed-bid engine of ``referee.games.bidding``."""

from referee.games.bidding import Goofspiel

__all__ = ["Goofspiel"]
