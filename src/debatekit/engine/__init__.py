"""The debate engine: a protocol's rules as nodes (:mod:`.nodes`), the commit boundary every
message crosses (:mod:`.boundary`), the async interpreter that plays one debate (:mod:`.play`),
records and replay (:mod:`.record`) and the mergeable summary of many debates (:mod:`.summary`)."""

DEFAULT_MOVE_TIMEOUT = 600.0
"""Seconds a player may take for one move (``--move-timeout``): generous, for LLMs and people.
Kept here, apart from the interpreter, so the command line can show it without importing numpy."""
