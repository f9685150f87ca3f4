"""Limits shared by the validator, the log matcher and the diagnose page."""

MAX_LINE_LENGTH = 4096  # log lines are cut to this many characters before matching
MATCHES_KEPT = 10  # matched lines kept per signature: enough to show and rank, bounded on any log
ERROR_LINES_KEPT = 64  # the last error lines kept for the closest-entries fallback (generator.closest)
