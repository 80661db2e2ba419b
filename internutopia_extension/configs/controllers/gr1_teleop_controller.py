"""``GR1TeleOpControllerCfg``: GR1's teleoperation controller (InternUtopia's module path)."""

from __future__ import annotations

from internutopia_extension.configs.controllers.joint_controller import JointControllerCfg


class GR1TeleOpControllerCfg(JointControllerCfg):
    """Position targets for ``joint_names``, as a teleoperation rig's solver sends them.

    InternUtopia's controller receives those targets over LCM from its Apple Vision Pro retargeting
    process (not part of this package); here the action is the target vector itself, one value
    per name of ``joint_names`` in that order (a :class:`JointControllerCfg` under InternUtopia's type name).
    """

    type: str = 'GR1TeleOpController'


__all__ = ['GR1TeleOpControllerCfg']
