"""The walking robots the trainer knows, as data: each one's Gymnasium id, policy file and modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

__all__ = ['ROBOTS', 'WalkingRobot', 'gait_or_h1s']


@dataclass(frozen=True)
class WalkingRobot:
    """What the trainer needs to know of one walking robot."""

    env_id: str  #: the Gymnasium id it trains on
    policy_file: str  #: the exported policy's file name (in ``--out``)
    gait: str  #: its gait module (observation, action scale, mirror maps)
    rewards: str  #: its reward module (term names of ``--reward-scale``)
    title: str  #: the training plot's title
    #: More arguments of its env: the model it trains on, where that is not the one users drive
    #: (the policy is evaluated and shipped on the latter).
    env_kwargs: dict[str, Any] = field(default_factory=dict)


#: The robots this trainer trains, by ``--robot`` name.
ROBOTS = {
    'h1': WalkingRobot('internutopia/H1Walk-v0', 'h1_walk.onnx', 'internutopia_extension.robots.h1_locomotion.gait',
                       'internutopia_extension.robots.h1_locomotion.rewards', 'H1 walking policy, PPO on CPU'),
    'aliengo': WalkingRobot('internutopia/AliengoWalk-v0', 'aliengo_walk.onnx', 'internutopia_extension.robots.aliengo_locomotion.gait',
                            'internutopia_extension.robots.aliengo_locomotion.rewards', 'Aliengo walking policy, PPO on CPU'),
    'gr1': WalkingRobot('internutopia/GR1Walk-v0', 'gr1_walk.onnx', 'internutopia_extension.robots.gr1_locomotion.gait',
                        'internutopia_extension.robots.gr1_locomotion.rewards', 'GR1 walking policy, PPO on CPU',
                        # The hands welded to the wrists: a physics step about 40 % cheaper (gr1_model.weld_hands).
                        env_kwargs={'hands': 'welded'}),
}


def gait_or_h1s(gait_module: ModuleType | None) -> ModuleType:
    """``gait_module``, or H1's gait (the default robot's)."""
    if gait_module is not None:
        return gait_module
    from internutopia_extension.robots.h1_locomotion import gait

    return gait
