"""The error the helper raises when the script's objects or loop are not ones it can measure."""


class HelperError(RuntimeError):
    """The script's objects are not ones the helper can measure; the message says what to do."""
