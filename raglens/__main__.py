"""``python -m raglens``."""

from raglens.cli.main import main

raise SystemExit(main())
