"""pbm-referee: a play-by-mail referee that runs games entirely by email."""

__version__ = "0.1.0"
