"""`python -m gpuscope`."""

from gpuscope.cli import main

raise SystemExit(main())
