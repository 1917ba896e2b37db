"""The app's panes, each a small widget with its own messages."""
