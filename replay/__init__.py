"""Run corpora through a detector under every rechunking (see issue: replay)."""
