"""gpulint: a static linter for the GPU container stack."""

__version__ = "0.1.0"
