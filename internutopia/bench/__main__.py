"""``python -m internutopia.bench``."""

import sys

from internutopia.bench.command import main

sys.exit(main())
