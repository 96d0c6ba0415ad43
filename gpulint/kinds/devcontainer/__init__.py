"""Dev container definitions (devcontainer.json)."""

from gpulint.kinds.devcontainer import recognise
from gpulint.registry import Kind

# shared: a Dockerfile's checks ask which Dockerfiles dev containers build
KIND = Kind("devcontainer", precedence=55, by_name=recognise.by_name,
            parse="gpulint.kinds.devcontainer.parse:parse",
            families=("gpulint.kinds.devcontainer.checks",), shared="always", suppressions=False)
