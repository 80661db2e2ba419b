"""Ready-made configs of the built-in extension types (importing registers their ``type`` names)."""

from internutopia_extension.configs import controllers, metrics, sensors, tasks  # noqa: F401
from internutopia_extension.configs.robots import g1, h1, jetbot  # noqa: F401
