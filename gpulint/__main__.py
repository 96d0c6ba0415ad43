import sys

from gpulint.face.cli import main

sys.exit(main())
