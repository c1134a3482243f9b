"""The club's wing: the games the players start by mail. ``words`` reads
the club's command lines of a mail (pure); ``tables`` keeps the open
tables, seats, invitations and starts (through ``play``'s operator) in the
caller's transaction; ``letters`` says which mails each action sends
(pure), ``sending`` renders and queues them; ``office`` is the operator's
and the clock's side (``tables``, ``table cancel``, ``member add``, the
expiry), a transaction an action. Intake's ``club`` link
(``intake/gamesmaster``) calls it for mail; it uses play and outgoing."""
