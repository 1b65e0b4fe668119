"""Experiments a researcher can keep: run logs, sweeps, their reports, and the demo."""
