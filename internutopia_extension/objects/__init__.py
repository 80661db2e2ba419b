"""Built-in objects (``DynamicCube``, ``VisualCube``, ``Table``, ``UsdObject``); importing registers them."""

from internutopia_extension.configs import objects as _configs  # noqa: F401  (registers the config types)
from internutopia_extension.objects import cube, observations, table, usd_object  # noqa: F401
