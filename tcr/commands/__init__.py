"""One module per ``tcr`` command; each parses options and calls one library function."""
