"""``python -m raglens``."""

from raglens.cli.main import main

# Guarded: a spawned embedding process re-imports the main module and must not run the CLI again.
if __name__ == "__main__":
    raise SystemExit(main())
