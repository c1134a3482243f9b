"""The club's wing: the games the players start by mail. ``words`` reads
the club's command lines of a mail (pure); ``tables`` keeps the open
tables, seats, invitations and starts (through ``play``'s operator) in the
caller's transaction. Intake calls it; it uses play and outgoing."""
