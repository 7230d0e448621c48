"""A directory for PYTHONPATH: its sitecustomize installs the sim host's hooks in every Python process its `python`
starts (commands/python.py)."""
