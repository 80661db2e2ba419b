"""``python -m internutopia ...``: the ``internutopia`` command (:mod:`internutopia.cli`), for an
environment whose scripts folder is not on ``PATH``."""

import sys

from internutopia.cli import main

if __name__ == '__main__':
    sys.exit(main())
