"""The play wing: a game loaded in a transaction and changed by the rules
(``session``), the command lines of a mail (``commands``) and the table's
own commands (``table``), the deadline sweep (``deadlines``) and the
operator's actions (``operator``).

It may use the outgoing wing; it never uses the intake wing.
"""
