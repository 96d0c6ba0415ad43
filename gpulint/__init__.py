"""gpulint: a static linter for the GPU container stack."""

__version__ = "0.1.0"
# The project's home; pyproject.toml's [project.urls] say the same (a test keeps them equal).
HOMEPAGE = "https://github.com/gpulint/gpulint"
