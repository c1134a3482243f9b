"""The outgoing wing: the referee's mail from the moment a change is told to
the moment the relay takes it. Delivery to each audience (``delivery``), the
players' mail modes (``quiet``), a mail into the outbox (``queue``), the
referee's own addresses (``addresses``), the outbox sent over SMTP or into a
Maildir (``outbox``, and ``streaming`` while a pass reads), and bounces
pinned on the mail they are about (``bounces``).

It imports nothing of the other wings: the intake and play wings call it.
"""
