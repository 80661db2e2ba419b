"""GR1's walking controller and the walking policy this project trained for it.

The biped counterpart of :mod:`internutopia_extension.robots.h1_locomotion`, whose walker it
shares (robot-specific parts are data):

- :mod:`.gait`: the observation, the actions and the gait clock, shared by training and deployment.
- :mod:`.walker`: the 50 Hz policy tick for every GR1 of a pack.
- :mod:`.rewards`: the reward terms (H1's, with GR1's numbers) and the fall check.
- :mod:`.episodes`: the training episodes (H1's sampler with a walking GR1).

- ``policy/gr1_walk.onnx``: the shipped policy; ``policy/run/``: its training run (resumable).

The model is :func:`internutopia_extension.robots.gr1_model.walking_spec` (``docs/robots.md``,
Fourier GR1; ``docs/training.md``, GR1).
"""
