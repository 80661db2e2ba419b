"""Built-in rewards; importing this package registers them."""

from internutopia_extension.rewards import point_nav_progress  # noqa: F401
