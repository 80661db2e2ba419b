"""Built-in metrics; importing this package registers them."""

from internutopia_extension.metrics import manipulation, navigation, recording, traveled_distance  # noqa: F401
