"""The argument parser every gpulint command uses: usage errors exit with 2 and a short message."""

from __future__ import annotations

import argparse
import sys

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits with 2 already; keep its message short
        self.print_usage(sys.stderr)
        print(f"gpulint: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
