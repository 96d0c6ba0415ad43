"""The images of GPU containers in Compose files and command lines, which the GL6xx
compatibility checks compare with the driver.
"""

from __future__ import annotations

from gpulint.model import Document, Span


def gpu_images(doc: Document) -> list[tuple[str, Span]]:
    """(image, where it is written) of the containers a Compose file or a command line
    gives GPUs, when the image is known."""
    if doc.kind == "compose":
        # Compose facts: only for Compose files
        from gpulint.kinds.compose.facts import gpu_service_images

        return gpu_service_images(doc)
    if doc.kind == "commands":
        # the command-line parser: only where commands are read
        from gpulint.kinds.commands.parse import gpu_command_images

        return gpu_command_images(doc)
    return []
