"""``python -m tcr.stdio package.module:factory``: serve a detector over stdin and stdout."""

from tcr.stdio.server import main

raise SystemExit(main())
