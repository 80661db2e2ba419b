"""Global settings InternUtopia scripts read as ``internutopia.macros.gm``.

``gm.ASSET_PATH`` is the folder of the package's own assets (``scenes/empty.usd`` and friends).
Set the environment variable ``INTERNUTOPIA_ASSET_PATH`` to use another folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

_PACKAGE_ASSETS = Path(__file__).resolve().parent / 'assets'

gm = SimpleNamespace(ASSET_PATH=os.environ.get('INTERNUTOPIA_ASSET_PATH', str(_PACKAGE_ASSETS)))
