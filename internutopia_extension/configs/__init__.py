"""Ready-made configs of the built-in extension types (importing registers their ``type`` names)."""

from internutopia_extension.configs import controllers, metrics, sensors, tasks  # noqa: F401
from internutopia_extension.configs.robots import (  # noqa: F401
    aliengo,
    franka,
    g1,
    gr1,
    h1,
    h1_with_hand,
    jetbot,
    mocap_controlled_franka,
)
