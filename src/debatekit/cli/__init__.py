"""The ``debatekit`` command line: thin commands over the public API."""
