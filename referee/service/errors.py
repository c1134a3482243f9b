"""The operator's refusal: a request from the command line that cannot be
done, with the sentence that says why."""


class RefereeError(Exception):
    """An operator's request cannot be done; the message says why."""
