"""The mirror loss: a gait the same on both legs, for SB3's PPO (a pass after each update) and for
rsl-rl's PPO (its symmetry extension, inside every minibatch).

Both compare what the policy does for an observation with the mirror image (left and right legs
swapped, lateral signs flipped) of what it does in the observation's mirror image, from the
robot's gait tables (:func:`~..gait.mirror_observation`, :data:`~..gait.LEG_MIRROR_INDEX`,
:data:`~..gait.LEG_MIRROR_SIGN`): the robot-specific part is data, passed as ``gait_module``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from internutopia_extension.robots.h1_locomotion.policy.walking_robots import gait_or_h1s

__all__ = ['freeze_actor', 'mirror_loss', 'mirror_updates', 'mirrored_ppo', 'rsl_rl_mirror']


def mirror_loss(policy: Any, obs: np.ndarray, gait_module: ModuleType | None = None) -> Any:
    """Mean squared gap, per action, between each observation's action (the Gaussian's mean) and
    the mirror of what the SB3 ``policy`` does in the observation's mirror image: zero for a policy
    that walks the same on both legs. ``obs`` is a numpy batch ``(k, OBS_SIZE)``; the loss is a
    torch scalar with the actor's gradient."""
    import torch

    gait = gait_or_h1s(gait_module)

    def batch(values: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(values, dtype=torch.float32, device=policy.device)

    action = policy.get_distribution(batch(obs)).distribution.mean
    mirror_action = policy.get_distribution(batch(gait.mirror_observation(obs))).distribution.mean
    return torch.mean((action - mirror_action[:, gait.LEG_MIRROR_INDEX] * batch(gait.LEG_MIRROR_SIGN)) ** 2)


def mirror_updates(model: Any, weight: float) -> float:
    """One pass over the last rollout's observations in minibatches, each a gradient step on
    ``weight`` times :func:`mirror_loss` (the run's optimizer, at its current rate); returns the
    last loss. Nothing while the actor is frozen (``--critic-warmup``)."""
    import torch

    policy = model.policy
    if not policy.log_std.requires_grad:
        return float('nan')
    obs = model.rollout_buffer.observations.reshape(-1, int(policy.observation_space.shape[0]))
    order = np.random.default_rng(model.num_timesteps).permutation(len(obs))
    loss = torch.zeros(())
    for start in range(0, len(obs), model.batch_size):
        loss = mirror_loss(policy, obs[order[start:start + model.batch_size]], getattr(model, 'gait_module', None))
        policy.optimizer.zero_grad()
        (weight * loss).backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
        policy.optimizer.step()
    return float(loss.detach())


def mirrored_ppo() -> Any:
    """Stable-Baselines3's PPO whose every update ends with :func:`mirror_updates` at the weight
    ``mirror_weight`` (an attribute; 0 leaves PPO as it is). Its checkpoints are PPO's."""
    from stable_baselines3 import PPO

    class MirroredPPO(PPO):
        mirror_weight = 0.0
        last_mirror_loss = float('nan')
        gait_module: ModuleType | None = None  # the robot's gait (mirror maps); None: H1's

        def _excluded_save_params(self) -> list[str]:
            # A module is set again by the trainer on load, not saved in the checkpoint.
            return [*super()._excluded_save_params(), 'gait_module']

        def train(self) -> None:
            super().train()
            if self.mirror_weight:
                # After PPO's epochs: the rollout buffer still holds the observations they used.
                self.last_mirror_loss = mirror_updates(self, self.mirror_weight)

    return MirroredPPO


def freeze_actor(model: Any, frozen: bool) -> None:
    """Keep the SB3 actor (its layers, head and action noise) out of the next updates, or let it back in."""
    policy = model.policy
    for parameter in (*policy.mlp_extractor.policy_net.parameters(), *policy.action_net.parameters(), policy.log_std):
        parameter.requires_grad_(not frozen)


def rsl_rl_mirror(gait_module: ModuleType | None = None) -> Any:
    """rsl-rl's symmetry function for the robot of ``gait_module`` (default H1's):
    ``f(env=, obs=, actions=) -> (obs, actions)`` where each given batch comes back with its mirror
    image appended (``[original; mirrored]``, rsl-rl's layout) and a missing one as ``None``.
    The gait's own numpy mirror maps do the work (the batches live on the CPU here; a GPU batch
    makes a round trip)."""
    import torch

    gait = gait_or_h1s(gait_module)
    sign = torch.as_tensor(gait.LEG_MIRROR_SIGN, dtype=torch.float32)
    index = torch.as_tensor(gait.LEG_MIRROR_INDEX, dtype=torch.long)

    def mirror(env: Any = None, obs: Any = None, actions: torch.Tensor | None = None) -> tuple[Any, Any]:
        mirrored_obs = None
        if obs is not None:
            mirrored_obs = obs.clone()
            for key, value in obs.items():
                image = gait.mirror_observation(value.detach().cpu().numpy())
                mirrored_obs[key] = torch.as_tensor(image, device=value.device)
            mirrored_obs = torch.cat([obs, mirrored_obs], dim=0)
        mirrored_actions = None
        if actions is not None:
            image = actions[:, index.to(actions.device)] * sign.to(actions.device)
            mirrored_actions = torch.cat([actions, image], dim=0)
        return mirrored_obs, mirrored_actions

    return mirror
