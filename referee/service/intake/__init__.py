"""The intake wing: a mail from the mailbox to the game it is about. One
mail one transaction (``receive``: cursor, dedupe, failed mail), its facts
worked out once (``letter``), then the ``chain`` of named checks: bounces
and automation, strangers and joining (``joining``), who wrote it
(``senders``), budgets (``budgets``), which game (``routing``), and play.

It may use the play and outgoing wings; they never use it.
"""
