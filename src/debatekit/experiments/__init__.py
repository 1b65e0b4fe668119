"""Experiments a researcher can keep: run logs and sweeps."""
