"""A directory for PYTHONPATH: its sitecustomize installs the disk-full guard in every sim-host Python process."""
