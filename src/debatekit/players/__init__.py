"""Players: the context a strategy sits down with, and the adversary families per protocol."""
