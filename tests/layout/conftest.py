"""Layout suite: checks of the source tree itself (no service needed)."""
