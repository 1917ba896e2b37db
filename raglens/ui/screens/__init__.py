"""Modal screens: help and window settings."""
