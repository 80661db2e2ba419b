"""``python -m internutopia.cli``: the ``internutopia`` command."""

import sys

from internutopia.cli import main

sys.exit(main())
