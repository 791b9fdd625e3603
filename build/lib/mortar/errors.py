"""The project's own input errors: bad input from the user, reported in one line with exit code 2.

Anything else that goes wrong is a bug (or a service that stayed down) and keeps its traceback.
"""


class InputError(Exception):
    """Bad input from the user: a dataset, a configuration, a run id, an output path."""
