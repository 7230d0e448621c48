"""The host's disks: what each mount holds now, and GNU df's rendering of it."""
