"""The mail edge: RFC 5322 in (parsing, authentication results) and out
(composing), IMAP and Maildir sources, SMTP and Maildir sinks. No game
logic and no database here."""
