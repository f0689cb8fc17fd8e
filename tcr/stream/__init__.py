"""Stream decoding: transport bytes to content chunks (DESIGN §4)."""
