"""The container commands of GitHub Actions workflows and GitLab CI files: the shell of
`run:` steps and `script:` lines, and the job images as the `docker create` the runner
does. A job with a matrix is read once per combination, with its values in place."""

from __future__ import annotations

from gpulint.formats.shell import Word, split_commands
from gpulint.kinds.commands.command import (
    ContainerCommand,
    container_command,
    read_flags,
)
from gpulint.kinds.commands.matrix import (
    MATRIX_REF,
    Combination,
    Matrix,
    Use,
    Value,
    github_matrix,
    github_substitute,
    github_text,
    gitlab_matrix,
    gitlab_substitute,
    substitute,
    with_variables,
)
from gpulint.model import LineIndex, Node, sequence
from gpulint.record import replace
from gpulint.regex import lazy

_SCRIPT_KEYS = ("script", "before_script", "after_script")
# `${{ env.NAME }}` in a `run:` step
_ENV_REF = lazy(r"\$\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}")


def ci_regions(text: str, index: LineIndex) -> list[tuple[int, int, bool]]:
    """The shell of GitHub Actions `run:` steps and GitLab CI `script:` lines."""
    regions = []
    for root in _documents(text, index):
        regions += _regions(text, index, _scripts(root))
    return regions


def _documents(text: str, index: LineIndex) -> list[Node | None]:
    # PyYAML: only for YAML text
    from gpulint.formats.yamlpos import parse_yaml_documents

    return parse_yaml_documents(text, index)


def _regions(text: str, index: LineIndex, nodes) -> list[tuple[int, int, bool]]:
    return [region for region in (scalar_region(text, index, node) for node in nodes) if region is not None]


def _scripts(node: Node | None, skip: frozenset[int] = frozenset()):
    """The `run:` and `script:` strings under `node`, but for the jobs in `skip` (ids)."""
    if node is None or node.is_scalar or id(node) in skip:
        return
    for key, child in node.items():
        if key == "run" and isinstance(child.value, str):
            yield child
        elif key in _SCRIPT_KEYS:
            yield from (item for item in (child.value if child.is_seq else [child])
                        if isinstance(item.value, str))
        elif not child.is_scalar:
            yield from _scripts(child, skip)
    for child in node.value if node.is_seq else ():
        yield from _scripts(child, skip)


def scalar_region(text: str, index: LineIndex, node: Node) -> tuple[int, int, bool] | None:
    """Where a YAML string's text lies in the file, when reading the file there gives
    the same shell words: literal and folded blocks, plain scalars, quoted ones
    without escapes."""
    start, end = index.offsets(node.span)
    first = text[start] if start < len(text) else ""
    if first in "|>":
        body = text.find("\n", start)
        return (body + 1, end, first == "|") if 0 <= body < end else None
    if first in "'\"":
        inner = text[start + 1:end - 1]
        if "\\" in inner or first * 2 in inner:
            return None
        return start + 1, end - 1, False
    return start, end, False


# ------------------------------------------------------------------ jobs and their images

# (node, key of its `docker create` flags, key of its image in a mapping)
_Image = tuple[Node | None, str | None, str]


def ci_commands(text: str, index: LineIndex, lines: list | None = None) -> list[ContainerCommand]:
    """The container commands; `lines` (when given) gets the words of every command of the
    shell, with the matrix and variable values in place, as the container commands are read."""
    out: list[ContainerCommand] = []
    for root in _documents(text, index):
        if root is None or not root.is_map:
            continue
        jobs = root.get("jobs")
        github = jobs is not None and jobs.is_map
        expanded: list[tuple[str, Node, Matrix]] = []
        images: list[_Image] = []
        for name, job in (jobs if github else root).items():
            if not job.is_map:
                continue
            if github:
                matrix = github_matrix(job)
                if matrix is None and (_env(root) or _env(job) or any(_env(step) for step in sequence(job.get("steps")))):
                    # no matrix, but `env:` values the shell of its steps reads
                    matrix = Matrix("github", None, ((),))
            elif name in _GITLAB_GLOBAL:
                continue
            else:
                matrix = with_variables(gitlab_matrix(job), gitlab_variables(root, job))
            if matrix is not None:
                expanded.append((name, job, matrix))
            else:
                images += _github_images(job) if github else _gitlab_images(job)
        if not github:  # the default image of every job
            images.append((root.get("image"), None, "name"))
        skip = frozenset(id(job) for _, job, _ in expanded)
        out += _read(_split(text, index, _scripts(root, skip)), images, text, index, lines_seen=lines)
        for name, job, matrix in expanded:
            scripts, job_images, env = _github_job(root, job) if github else _gitlab_job(root, job)
            out += _expand(text, index, scripts, job_images, name, matrix, env, lines)
    return out


def _github_images(job: Node) -> list[_Image]:
    """A GitHub Actions job's `container:` (its `options` are `docker create` flags) and
    `services:`."""
    services = job.get("services")
    return [(job.get("container"), "options", "image")] + \
        [(service, "options", "image") for _, service in (services.items() if services is not None else ())]


def _gitlab_images(job: Node) -> list[_Image]:
    services = job.get("services")
    return [(job.get("image"), None, "name")] + [(service, None, "name") for service in sequence(services)]


def _github_job(root: Node, job: Node) -> tuple[list[Node], list[_Image], dict[int, dict[str, Node]]]:
    """A GitHub Actions job's `run:` steps, its images, and for each step (by id) the
    `env:` variables it has (the workflow's, the job's, the step's, later ones winning),
    with the matrix values GitHub puts in them: the shell reads them as `$VAR`."""
    base = {**_env(root), **_env(job)}
    runs, env = [], {}
    for step in sequence(job.get("steps")):
        run = step.get("run") if step.is_map else None
        if run is not None and isinstance(run.value, str):
            runs.append(run)
            env[id(run)] = {name: value for name, value in {**base, **_env(step)}.items()
                            if value.is_scalar and value.tag != "null"}
    return runs, _github_images(job), env


def _env(node: Node) -> dict[str, Node]:
    env = node.get("env") if node.is_map else None
    return dict(env.items()) if env is not None else {}


# what a GitLab job takes from the jobs it `extends`, and those of them `default:` gives
_GITLAB_KEYS = ("image", "services", "before_script", "script", "after_script")
_GITLAB_DEFAULTS = ("image", "services", "before_script", "after_script")


def _gitlab_job(root: Node, job: Node) -> tuple[list[Node], list[_Image], dict]:
    """A GitLab matrix job's script lines and images, with what it takes from the jobs it
    `extends` (the job's own keys first, then its last `extends` entry's) and from
    `default:` (or the top-level `image:`), where the matrix variables reach too."""
    found = {key: _extended(root, job, key, set()) for key in _GITLAB_KEYS}
    inherit = job.get("inherit", "default")
    if inherit is None or inherit.value is not False:
        default = root.get("default")
        named = {item.str() for item in sequence(inherit)} if inherit is not None and inherit.is_seq else None
        for key in _GITLAB_DEFAULTS:
            if found[key] is None and (named is None or key in named):
                found[key] = (default.get(key) if default is not None and default.is_map else None) \
                    or (root.get(key) if key == "image" else None)
    scripts = [item for key in _SCRIPT_KEYS if found[key] is not None
               for item in (found[key].value if found[key].is_seq else [found[key]]) if isinstance(item.value, str)]
    images = [(found["image"], None, "name")] + [(service, None, "name") for service in sequence(found["services"])]
    return scripts, images, {}


# top-level keys of a GitLab CI file that are not jobs
_GITLAB_GLOBAL = frozenset(("variables", "default", "stages", "include", "workflow", "image", "services",
                            "before_script", "after_script", "cache", "spec"))


def gitlab_variables(root: Node, job: Node) -> tuple[Value, ...]:
    """The variables every run of a GitLab job has from the file: the top-level
    `variables:` (unless `inherit: variables` leaves them out), then those of the jobs it
    `extends` and its own, later ones winning. A value that names another variable is
    read with the plain values put in; one that still holds a `$` is left out."""
    found: dict[str, Node] = {}
    inherit = job.get("inherit", "variables")
    if inherit is None or inherit.value is not False:
        named = {item.str() for item in sequence(inherit)} if inherit is not None and inherit.is_seq else None
        found.update((k, v) for k, v in _variables_of(root).items() if named is None or k in named)
    found.update(_job_variables(root, job, set()))
    values = {name: github_text(node) for name, node in found.items()}
    plain = tuple(Value(name, text, found[name], variable=True)
                  for name, text in values.items() if text is not None and "$" not in text)
    out = list(plain)
    for name, text in values.items():
        if text is not None and "$" in text:
            expanded, _ = gitlab_substitute(text, plain, shell=False)
            if "$" not in expanded:
                out.append(Value(name, expanded, found[name], variable=True))
    return tuple(out)


def _variables_of(node: Node) -> dict[str, Node]:
    """A `variables:` mapping's values: a string or number, or a mapping's `value`."""
    variables = node.get("variables") if node.is_map else None
    out = {}
    for name, value in variables.items() if variables is not None and variables.is_map else ():
        if value.is_map:
            value = value.get("value")
        if value is not None and value.is_scalar:
            out[name] = value
    return out


def _job_variables(root: Node, job: Node, seen: set[str]) -> dict[str, Node]:
    """A job's variables over those of the jobs it `extends` (GitLab merges the mappings)."""
    parents = job.get("extends")
    names = [parents.value] if parents is not None and isinstance(parents.value, str) else \
        [item.value for item in sequence(parents) if isinstance(item.value, str)]
    found: dict[str, Node] = {}
    for name in names:
        parent = root.get(name)
        if name not in seen and parent is not None and parent.is_map:
            found.update(_job_variables(root, parent, seen | {name}))
    found.update(_variables_of(job))
    return found


def _extended(root: Node, job: Node, key: str, seen: set[str]) -> Node | None:
    if key in job.value:
        return job.value[key]
    parents = job.get("extends")
    names = [parents.value] if parents is not None and isinstance(parents.value, str) else \
        [item.value for item in sequence(parents) if isinstance(item.value, str)]
    for name in reversed(names):
        parent = root.get(name)
        if name not in seen and parent is not None and parent.is_map:
            found = _extended(root, parent, key, seen | {name})
            if found is not None:
                return found
    return None


def _expand(text: str, index: LineIndex, scripts: list[Node], images: list[_Image], job: str,
            matrix: Matrix, env: dict[int, dict[str, Node]], seen: list | None) -> list[ContainerCommand]:
    lines = _split(text, index, scripts)  # once: each combination reads the same words
    if matrix.unknown is not None:
        commands = _read(lines, images, text, index, lines_seen=seen)
        # the `env:` variables that take matrix values, as the shell names them
        names = {f"${brace}{name}" for step in env.values() for name, value in step.items()
                 if isinstance(value.value, str) and MATRIX_REF.search(value.value) for brace in ("", "{")}
        for command in commands:
            if any(matrix.refers(word.text) or any(name in word.text for name in names)
                   for word in _words(command)):
                command.unexpanded, command.job = matrix, job
        return commands
    out = []
    partly = None
    for combo in matrix.combinations:
        for command in _read(lines, images, text, index, matrix, combo, env, seen):
            command.job = job
            left = next((found[0] for word in _words(command) for found in [MATRIX_REF.search(word.text)]
                         if found and matrix.style == "github"), None)
            if left is not None:
                partly = partly or replace(matrix, left=left)
                command.unexpanded = partly
            out.append(command)
    return out


def _words(command: ContainerCommand) -> list[Word]:
    """Every word of a command, a CI image's `options` and the image included."""
    flags = [word for flag in command.flags for word in (flag.word, flag.value) if word is not None]
    return command.words + flags + ([command.image] if command.image is not None else [])


def _split(text: str, index: LineIndex, scripts) -> list[tuple[Node, list[list[Word]]]]:
    """Each script with the words of its commands."""
    out = []
    for node in scripts:
        region = scalar_region(text, index, node)
        out.append((node, split_commands(text, *region) if region is not None else []))
    return out


def _read(lines: list[tuple[Node, list[list[Word]]]], images: list[_Image], text: str, index: LineIndex,
          matrix: Matrix | None = None, combo: Combination = (),
          env: dict[int, dict[str, Node]] | None = None, lines_seen: list | None = None) -> list[ContainerCommand]:
    out = []
    for node, commands in lines:
        variables = _variables(env.get(id(node), {}), combo) if env and matrix is not None else None
        for words in commands:
            uses: list[Use] = []
            # GitHub replaces `${{ }}` before the shell reads the step; GitLab's variables are
            # the shell's to expand, so only where it expands them
            if matrix is not None:
                words = _put_all(words, matrix, combo, uses, shell=matrix.style == "gitlab")
            if variables is not None:
                words = _put_variables(words, variables, uses)
            if lines_seen is not None:
                lines_seen.append(words)
            command = container_command(words)
            if command is not None:
                command.matrix = tuple(uses)
                out.append(command)
    for node, options, name_key in images:
        out += _image(text, index, node, options, name_key, matrix, combo)
    return out


def _variables(env: dict[str, Node], combo: Combination) -> tuple[Matrix, dict[str, list[Value]]] | None:
    """The `env:` variables with the combination's values in, as a one-combination matrix
    the shell reads, and the matrix values each holds."""
    values, sources = [], {}
    for name, node in env.items():
        value, used = github_substitute(github_text(node) or "", combo, split=True)
        if "${{" not in value:
            values.append(Value(name, value, node, variable=not used))
            sources[name] = used
    return (Matrix("gitlab", None, (tuple(values),)), sources) if values else None


def _put_variables(words: list[Word], variables: tuple[Matrix, dict[str, list[Value]]],
                   uses: list[Use]) -> list[Word]:
    matrix, sources = variables
    found: list[Use] = []
    names = {value.name for value in matrix.combinations[0]}
    words = [_env_as_shell(word, names) for word in words]
    words = _put_all(words, matrix, matrix.combinations[0], found, shell=True)
    # a value made of matrix values names them; a plain one names itself
    uses += [Use(value, use.start, use.end) for use in found for value in sources[use.value.name] or [use.value]]
    return words


def _env_as_shell(word: Word, names: set[str]) -> Word:
    """`${{ env.NAME }}` of a variable the step has, as the `${NAME}` the shell then reads:
    GitHub puts the same value in before the shell runs, quoted or not."""
    new = _ENV_REF.sub(lambda m: "${" + m[1] + "}" if m[1] in names else m[0], word.text)
    return word if new == word.text else replace(word, text=new, expands=True)


def _put_all(words: list[Word], matrix: Matrix, combo: Combination, uses: list[Use], shell: bool) -> list[Word]:
    """The words with the combination's values in place; a word left empty and unquoted
    is gone, as the shell drops it (`--gpus ${{ matrix.gpus }}` where `gpus` is unset
    makes the next word the value of `--gpus`)."""
    out = []
    for word in words:
        before = len(uses)
        new = _put(word, matrix, combo, uses, shell, split=not word.quoted)
        blanks = any(" " in (use.value.text or "") for use in uses[before:])
        if new is word or new.quoted or new.text and not blanks:
            out.append(new)
        elif blanks:  # unquoted: the shell splits the value at its blanks
            out += [replace(new, text=part) for part in new.text.split(" ") if part]
        # and an empty unquoted word is no word at all
    return out


def _put(word: Word, matrix: Matrix, combo: Combination, uses: list[Use], shell: bool,
         split: bool = False) -> Word:
    """The word with the combination's values in place."""
    if shell and not word.expands:
        return word
    new, used = substitute(matrix, word.text, combo, shell, split)
    if not used and new == word.text:
        return word
    uses.extend(Use(value, word.start, word.end) for value in used)
    # what is left to expand after the matrix values are in place
    expands = word.expands and ("$" in new or "`" in new) or "${{" in new
    return replace(word, text=new, expands=expands)


def _image(text: str, index: LineIndex, node: Node | None, options: str | None, name_key: str,
           matrix: Matrix | None, combo: Combination) -> list[ContainerCommand]:
    """One job or service container: an image string, or a mapping with its image."""
    if node is None:
        return []
    image = node if node.is_scalar else node.get(name_key) if node.is_map else None
    if image is None or not isinstance(image.value, str):
        return []
    command = ContainerCommand("docker", "create", [])  # what the runner does with it
    uses: list[Use] = []
    region = scalar_region(text, index, image)
    written = Word(image.value.strip(), region[0], region[1], expands="$" in image.value) \
        if region is not None else None
    if written is not None and matrix is not None:
        written = _put(written, matrix, combo, uses, shell=False)
    extra = node.get(options) if options and node.is_map else None
    region = scalar_region(text, index, extra) if extra is not None and isinstance(extra.value, str) else None
    for words in split_commands(text, *region) if region is not None else ():
        read_flags(command, _put_all(words, matrix, combo, uses, shell=False) if matrix else words, 0)
    command.image = written
    command.matrix = tuple(uses)
    return [command] if command.image is not None or command.flags else []
