"""``gym_adapter``: reorder joint values between a policy's joint order and the robot's (InternUtopia's helper).

>>> adapter = gym_adapter(['b', 'a'], ['a', 'b', 'c'])
>>> adapter.gym2sim(np.array([2.0, 1.0])).tolist()
[1.0, 2.0, None]
"""

from __future__ import annotations

import numpy as np


class gym_adapter:  # noqa: N801 - InternUtopia's name
    """Maps values ordered by ``joint_names_gym`` (a policy's) to ``joint_names_sim`` (the robot's) and back."""

    def __init__(self, joint_names_gym: list[str], joint_names_sim: list[str]) -> None:
        self.joint_names_gym = list(joint_names_gym)
        self.joint_names_sim = list(joint_names_sim)

    @staticmethod
    def rearange_order(src: list | np.ndarray, from_joint_names: list[str], to_joint_names: list[str]) -> np.ndarray:
        """``src`` (ordered by ``from_joint_names``) in the order of ``to_joint_names``; ``None`` where
        a joint of ``to_joint_names`` has no value.

        Raises:
            ValueError: a joint of ``from_joint_names`` is not in ``to_joint_names``.
        """
        values = list(np.asarray(src).tolist())
        out: list = [None] * len(to_joint_names)
        for value, name in zip(values, from_joint_names, strict=True):
            if name not in to_joint_names:
                raise ValueError(f'joint {name!r} is not among {list(to_joint_names)}')
            out[to_joint_names.index(name)] = value
        return np.array(out, dtype=object if None in out else float)

    def gym2sim(self, action: list | np.ndarray) -> np.ndarray:
        """A policy's action in the robot's joint order."""
        return self.rearange_order(action, self.joint_names_gym, self.joint_names_sim)

    def sim2gym(self, obs: list | np.ndarray) -> np.ndarray:
        """The robot's joint values in the policy's order."""
        return self.rearange_order(obs, self.joint_names_sim, self.joint_names_gym)


__all__ = ['gym_adapter']
