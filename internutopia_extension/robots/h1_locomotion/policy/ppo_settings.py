"""PPO's settings for walking, one set for both trainers (SB3 and rsl-rl) and the training benchmark.

The actor and the critic are MLPs of :data:`HIDDEN_LAYERS` with ELU; each update takes
:data:`EPOCHS` passes over the rollout in batches of :data:`BATCH_SIZE` transitions; the learning
rate adapts to the policy's change (legged_gym's rule, rsl-rl's ``schedule='adaptive'``): when an
update's mean KL divergence is above twice :data:`DESIRED_KL` the rate drops by 1.5x, below half it
rises by 1.5x, within :data:`LEARNING_RATE_BOUNDS`.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ['BATCH_SIZE', 'CLIP_RANGE', 'CRITIC_WARMUP_RATE', 'DESIRED_KL', 'ENTROPY_COEF', 'EPOCHS', 'GAE_LAMBDA', 'GAMMA',
           'HIDDEN_LAYERS', 'LEARNING_RATE_BOUNDS', 'LOG_STD_INIT', 'MAX_GRAD_NORM', 'VALUE_COEF', 'rsl_rl_config',
           'sb3_ppo_kwargs']

HIDDEN_LAYERS = (256, 128, 64)
BATCH_SIZE = 2048
EPOCHS = 5
GAMMA = 0.99
GAE_LAMBDA = 0.95
CLIP_RANGE = 0.2
ENTROPY_COEF = 0.001
VALUE_COEF = 1.0
MAX_GRAD_NORM = 1.0
#: The action noise's starting log standard deviation (std 0.50).
LOG_STD_INIT = -0.7
#: Mean KL divergence per update the adaptive learning rate aims at, and the rate's bounds.
DESIRED_KL = 0.01
LEARNING_RATE_BOUNDS = (1e-5, 1e-2)
#: Learning rate of the critic's warm-up updates (``--critic-warmup``; the actor is frozen then).
CRITIC_WARMUP_RATE = 1e-3


def sb3_ppo_kwargs(rollout: int, num_envs: int, learning_rate: float, seed: int = 0, device: str = 'cpu') -> dict[str, Any]:
    """Stable-Baselines3 ``PPO(...)`` keyword arguments (after the policy and the env)."""
    import torch

    return {'n_steps': rollout, 'batch_size': min(BATCH_SIZE, rollout * num_envs), 'n_epochs': EPOCHS,
            'learning_rate': learning_rate, 'gamma': GAMMA, 'gae_lambda': GAE_LAMBDA, 'clip_range': CLIP_RANGE,
            'ent_coef': ENTROPY_COEF, 'vf_coef': VALUE_COEF, 'max_grad_norm': MAX_GRAD_NORM, 'seed': seed, 'device': device,
            'verbose': 0, 'policy_kwargs': {'net_arch': {'pi': list(HIDDEN_LAYERS), 'vf': list(HIDDEN_LAYERS)},
                                            'activation_fn': torch.nn.ELU, 'log_std_init': LOG_STD_INIT}}


def rsl_rl_config(rollout: int, num_envs: int, learning_rate: float, mirror_weight: float = 0.0, mirror: Any = None,
                  seed: int = 0) -> dict[str, Any]:
    """rsl-rl's ``OnPolicyRunner`` configuration with the same settings: minibatches of
    :data:`BATCH_SIZE` (``num_mini_batches`` = rollout size / batch size), the adaptive schedule,
    no observation normalization (the walking robots' ONNX graph has none), and with
    ``mirror_weight`` > 0 its symmetry extension's mirror loss through ``mirror`` (an
    augmentation function, :func:`~.mirror.rsl_rl_mirror`)."""
    symmetry = None
    if mirror_weight:
        symmetry = {'data_augmentation_func': mirror, 'use_data_augmentation': False, 'use_mirror_loss': True,
                    'mirror_loss_coeff': float(mirror_weight)}
    model = {'class_name': 'MLPModel', 'hidden_dims': list(HIDDEN_LAYERS), 'activation': 'elu', 'obs_normalization': False}
    return {
        'num_steps_per_env': rollout, 'save_interval': 10**9, 'seed': seed, 'obs_groups': {'actor': ['policy'], 'critic': ['policy']},
        'actor': {**model, 'distribution_cfg': {'class_name': 'GaussianDistribution', 'init_std': math.exp(LOG_STD_INIT),
                                                'std_type': 'log'}},
        'critic': dict(model),
        'algorithm': {'class_name': 'PPO', 'num_learning_epochs': EPOCHS,
                      'num_mini_batches': max(1, rollout * num_envs // BATCH_SIZE), 'clip_param': CLIP_RANGE, 'gamma': GAMMA,
                      'lam': GAE_LAMBDA, 'value_loss_coef': VALUE_COEF, 'entropy_coef': ENTROPY_COEF,
                      'learning_rate': learning_rate, 'max_grad_norm': MAX_GRAD_NORM, 'schedule': 'adaptive',
                      'desired_kl': DESIRED_KL, 'symmetry_cfg': symmetry},
        'check_for_nan': True,
    }
