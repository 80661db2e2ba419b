"""The MuJoCo Warp backend (``SimConfig(backend='warp', device='cuda:0' or 'cpu')``).

Slots of one structure share one MuJoCo Warp ``Model`` and one ``Data`` with a world axis (world
``i`` is env slot ``i``), stepped together on the device; the pack's state arrays are host
copies moved to the device before a step and back after it. Importing this package needs
nothing; its modules import ``warp`` and ``mujoco_warp`` (the ``warp`` extra), and the backend is
loaded on first use through :func:`internutopia.core.backend.get_backend`. ``docs/backend.md``
("The Warp backend") says what runs there and how fast.
"""
