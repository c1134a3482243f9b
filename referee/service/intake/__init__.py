"""The intake wing: a mail from the mailbox to the game it is about. One
mail one transaction (``receive``: cursor, dedupe, failed mail), its facts
worked out once (``letter``), then the ``chain`` of named checks: bounces
and automation, strangers and joining (``joining``), who wrote it
(``senders``), budgets (``budgets``), which game (``routing``), each only
judging, and the play step (in the play wing) for a mail they let through.

It may use the play and outgoing wings; they never use it.
"""
