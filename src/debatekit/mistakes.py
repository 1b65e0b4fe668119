"""The user's mistake: one error every command turns into one line on stderr and exit status 2
(the Python API into :class:`debatekit.api.UsageError`). Imports nothing, so the command line's
signatures (``cli/options``) can name it."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the command line, a config or a call: one line on stderr, exit status 2."""
