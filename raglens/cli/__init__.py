"""The headless command line: argument parsing, human output and JSON documents."""
