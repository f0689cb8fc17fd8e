"""Generate and mutate streams with ground truth (see issue: fuzz)."""
