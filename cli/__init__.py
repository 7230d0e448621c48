"""The `specops` command line."""
