"""Built-in tasks; importing this package registers them."""

from internutopia_extension.tasks import finite_step, locomotion, manipulation, point_nav, single_inference  # noqa: F401
