"""Ready-made robot configs: ``h1``, ``g1``, ``jetbot``, ``franka``."""
