"""The play wing: a game loaded in a transaction and changed by the rules
(``session``), the play step a mail intake let through takes (``step``),
the command lines of a mail (``commands``) and the table's
own commands (``table``), the deadline sweep (``deadlines``), the
operator's actions (``operator``), and whether a game's package can serve
it now (``guests``).

It may use the outgoing wing; it never uses the intake wing.
"""
