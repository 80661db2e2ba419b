"""Built-in metrics; importing this package registers them."""

from internutopia_extension.metrics import navigation, traveled_distance  # noqa: F401
