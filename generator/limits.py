"""Limits shared by the validator, the log matcher and the diagnose page."""

MAX_LINE_LENGTH = 4096  # log lines are cut to this many characters before matching
