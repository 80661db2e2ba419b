"""H1's walking controller: its model, what it observes and commands, its runtime and training.

- :mod:`.model`: the walking model (no gravity compensation, torque-limited servos, sole sensors).
- :mod:`.gait`: the observation, the actions and the gait clock, shared by training and deployment.
- :mod:`.walker`: the 50 Hz policy tick for every H1 of a pack.
- :mod:`.rewards`: the reward terms and the fall check the policy was trained with.
- ``policy/``: the trained policy (``h1_walk.onnx``), the script that trained it and its figures.
"""
