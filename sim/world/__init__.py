"""A simulated world: one sim host (a directory tree), its Hub emulator, its servers."""
