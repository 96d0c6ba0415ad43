"""The images of GPU containers in Compose files and command lines, which the GL6xx
compatibility checks compare with the driver.
"""

from __future__ import annotations

from typing import NamedTuple

from gpulint.model import Document, Related, Span


class ImageUse(NamedTuple):
    ref: str
    where: Span
    # a CI matrix combination the image is read with (`(matrix: cuda=12.8.1)`), and where
    # the values that make it are written
    combination: str = ""
    related: tuple[Related, ...] = ()


def gpu_images(doc: Document) -> list[ImageUse]:
    """The images of the containers a Compose file or a command line gives GPUs, when
    the image is known, with where each is written."""
    if doc.kind == "compose":
        # Compose facts: only for Compose files
        from gpulint.kinds.compose.facts import gpu_service_images

        return [ImageUse(ref, where) for ref, where in gpu_service_images(doc)]
    if doc.kind == "commands":
        # the command-line parser: only where commands are read
        from gpulint.kinds.commands.parse import gpu_command_images

        return [ImageUse(*found) for found in gpu_command_images(doc)]
    return []
