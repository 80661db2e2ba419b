"""Config classes of the built-in tasks, one module each (InternUtopia's module paths).

- :mod:`.single_inference_task`: ``SingleInferenceTaskCfg`` (the script ends the episode);
- :mod:`.finite_step_task`: ``FiniteStepTaskCfg`` (ends after ``max_steps``);
- :mod:`.point_nav_task`: ``PointNavTaskCfg`` and its reward ``PointNavProgressRewardCfg``;
- :mod:`.manipulation_task`: ``ManipulationTaskCfg`` (with pick-and-place goals);
- :mod:`.locomotion_task`: ``LocomotionTaskCfg`` (a walking robot follows velocity commands).
"""

from internutopia_extension.configs.tasks.finite_step_task import FiniteStepTaskCfg
from internutopia_extension.configs.tasks.locomotion_task import LocomotionTaskCfg
from internutopia_extension.configs.tasks.manipulation_task import MANIPULATION_RESERVED_NAMES, ManipulationTaskCfg
from internutopia_extension.configs.tasks.point_nav_task import (
    POINT_NAV_RESERVED_NAMES,
    POINT_NAV_REWARD_DEFAULTS,
    PointNavProgressRewardCfg,
    PointNavTaskCfg,
)
from internutopia_extension.configs.tasks.single_inference_task import SingleInferenceTaskCfg

__all__ = ['MANIPULATION_RESERVED_NAMES', 'POINT_NAV_RESERVED_NAMES', 'POINT_NAV_REWARD_DEFAULTS', 'FiniteStepTaskCfg', 'LocomotionTaskCfg',
           'ManipulationTaskCfg', 'PointNavProgressRewardCfg', 'PointNavTaskCfg', 'SingleInferenceTaskCfg']
