"""A walking policy's ONNX file, both ways: the actor out as the graph the walking robots load, and
an exported file's weights back in as the start of a run (SB3 or rsl-rl).

The graph is ``obs -> action``: the actor's MLP (``body.*`` weights), its action head (``head.*``)
and a clamp to [-1, 1], with the gait's action scale in the metadata
(:data:`~..gait.ACTION_SCALE_METADATA`); :mod:`internutopia_extension.robots.walker_driven` loads
it. An SB3 policy and an rsl-rl actor of the same layers export the same graph.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from internutopia_extension.robots.h1_locomotion.policy.walking_robots import gait_or_h1s

__all__ = ['ONNX_TO_POLICY', 'ONNX_TO_RSL_RL', 'actor_from_onnx', 'export_actor', 'export_onnx', 'export_rsl_rl_actor',
           'rsl_rl_actor_from_onnx', 'start_from', 'widen_inputs']

#: The exported graph's weights (:func:`export_onnx`'s names) and the SB3 policy's they came from.
ONNX_TO_POLICY = {'body.': 'mlp_extractor.policy_net.', 'head.': 'action_net.'}


def export_actor(body: Any, head: Any, obs_size: int, path: str | Path, gait_module: ModuleType | None = None,
                 device: Any = 'cpu') -> None:
    """Write ``head(body(obs))`` clamped to [-1, 1] as the ONNX graph ``obs -> action`` at ``path``
    (atomically), with the robot's ``gait_module.ACTION_SCALE`` (default H1's) in its metadata."""
    import onnx
    import torch

    gait = gait_or_h1s(gait_module)

    class Mean(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = body
            self.head = head

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return torch.clamp(self.head(self.body(obs)), -1.0, 1.0)

    mean = Mean().eval()
    temporary = Path(str(path) + '.tmp')
    # The TorchScript exporter (dynamo=False) on purpose: torch.export's writes another graph;
    # its deprecation notices say nothing to act on here.
    with torch.no_grad(), warnings.catch_warnings():
        # By message, not module: run as ``-m`` the warning is attributed to ``__main__``.
        warnings.filterwarnings('ignore', category=DeprecationWarning, message=r'.*legacy TorchScript-based ONNX export')
        warnings.filterwarnings('ignore', category=DeprecationWarning, module=r'torch\.onnx')
        torch.onnx.export(mean, (torch.zeros(1, obs_size, device=device),), str(temporary), input_names=['obs'],
                          output_names=['action'], dynamic_axes={'obs': {0: 'batch'}, 'action': {0: 'batch'}}, dynamo=False)
    # The action scale the policy was trained with travels in the file: the walker refuses a policy
    # made for other scales instead of driving the joints wrong.
    graph = onnx.load(str(temporary))
    onnx.helper.set_model_props(graph, {gait.ACTION_SCALE_METADATA: json.dumps([float(v) for v in gait.ACTION_SCALE])})
    onnx.save(graph, str(temporary))
    os.replace(temporary, path)


def export_onnx(model: Any, path: str | Path, gait_module: ModuleType | None = None) -> None:
    """An SB3 PPO ``model``'s deterministic action (the Gaussian's mean) as the walking robots'
    ONNX graph (:func:`export_actor`)."""
    policy = model.policy
    export_actor(policy.mlp_extractor.policy_net, policy.action_net, int(policy.observation_space.shape[0]), path,
                 gait_module, policy.device)


def export_rsl_rl_actor(actor: Any, path: str | Path, gait_module: ModuleType | None = None) -> None:
    """An rsl-rl ``MLPModel`` actor's deterministic action as the same graph: its MLP's layers
    but the last are the body (the same ``body.0``, ``body.2``, ... names as SB3's), the last is the
    head. An actor that normalizes its observations is refused (the graph has no normalizer)."""
    import torch

    if not isinstance(actor.obs_normalizer, torch.nn.Identity):
        raise ValueError('the walking robots load a policy without an observation normalizer; train with obs_normalization=False')
    layers = list(actor.mlp)  # (not children(): the one ELU module appears between every layer)
    # A plain Sequential of the same modules: the same weight names (``body.0``, ``body.2``, ...).
    export_actor(torch.nn.Sequential(*layers[:-1]), layers[-1], int(actor.obs_dim), path, gait_module,
                 next(actor.parameters()).device)


def widen_inputs(state: dict[str, Any], new_columns: list[int]) -> dict[str, Any]:
    """A policy's ``state_dict`` with zero-weight inputs inserted at ``new_columns`` (indices in the
    new observation) of the first layer of the actor and the critic."""
    import torch

    widened = dict(state)
    for key in ('mlp_extractor.policy_net.0.weight', 'mlp_extractor.value_net.0.weight'):
        old = state[key]
        size = old.shape[1] + len(new_columns)
        kept = [c for c in range(size) if c not in set(new_columns)]
        weight = torch.zeros(old.shape[0], size, dtype=old.dtype)
        weight[:, kept] = old
        widened[key] = weight
    return widened


def actor_from_onnx(path: str | Path, action_scale: np.ndarray | None = None, gait_module: ModuleType | None = None) -> dict[str, Any]:
    """The actor's weights of an ONNX file :func:`export_onnx` wrote, as a PPO policy's
    ``state_dict`` entries (no critic, no action noise: the file holds neither), for the current
    :data:`~..gait.ACTION_SCALE`: where the file was trained with other scales (its metadata, or
    ``action_scale`` for a file without), the action head is rescaled so that the servo targets stay
    the same (except where an action sat at the old limit: the wider one lets it reach further)."""
    import onnx
    import torch
    from onnx import numpy_helper

    gait = gait_or_h1s(gait_module)
    graph = onnx.load(str(path))
    recorded = {prop.key: prop.value for prop in graph.metadata_props}.get(gait.ACTION_SCALE_METADATA)
    trained_scale = np.asarray(json.loads(recorded) if recorded else (gait.ACTION_SCALE if action_scale is None else action_scale),
                               dtype=float)
    state = {}
    for tensor in graph.graph.initializer:
        prefix = next((p for p in ONNX_TO_POLICY if tensor.name.startswith(p)), None)
        if prefix is None:
            raise ValueError(f'{path}: weight {tensor.name!r} is not one of an exported walking policy '
                             f'(names start with {sorted(ONNX_TO_POLICY)})')
        state[ONNX_TO_POLICY[prefix] + tensor.name[len(prefix):]] = torch.from_numpy(numpy_helper.to_array(tensor).copy())
    ratio = torch.as_tensor(trained_scale / gait.ACTION_SCALE, dtype=torch.float32)
    state['action_net.weight'] = state['action_net.weight'] * ratio[:, None]
    state['action_net.bias'] = state['action_net.bias'] * ratio
    return state


#: The SB3 names of :func:`actor_from_onnx` and an rsl-rl actor's (``MLPModel.mlp``: 3 hidden layers, ELU between).
ONNX_TO_RSL_RL = {'mlp_extractor.policy_net.': 'mlp.', 'action_net.': 'mlp.6.'}


def rsl_rl_actor_from_onnx(path: str | Path, action_scale: np.ndarray | None = None,
                           gait_module: ModuleType | None = None) -> dict[str, Any]:
    """:func:`actor_from_onnx`'s weights under an rsl-rl actor's names (its MLP; the action noise
    stays the actor's own)."""
    state = {}
    for name, value in actor_from_onnx(path, action_scale, gait_module).items():
        prefix = next(p for p in ONNX_TO_RSL_RL if name.startswith(p))
        state[ONNX_TO_RSL_RL[prefix] + name[len(prefix):]] = value
    return state


def start_from(model: Any, checkpoint: Path, max_std: float, action_scale: np.ndarray | None = None,
               gait_module: ModuleType | None = None) -> None:
    """Load ``checkpoint``'s policy into the SB3 ``model``, widening its first layers to ``model``'s
    observation (new inputs first, the old layout after them, as :mod:`..gait` grew) and capping
    its action noise at ``max_std``. ``checkpoint`` is a run's ``checkpoint.zip`` or an exported
    ``.onnx`` policy (then only the actor is loaded, rescaled by :func:`actor_from_onnx` to the
    current action scale, ``action_scale`` being the file's where it does not record it; the critic
    keeps its fresh weights)."""
    import io
    import zipfile

    import torch

    if checkpoint.suffix == '.onnx':
        actor = actor_from_onnx(checkpoint, action_scale, gait_module)
        state = {**model.policy.state_dict(), **actor}
        if state['mlp_extractor.policy_net.0.weight'].shape[1] != int(model.policy.observation_space.shape[0]):
            raise ValueError(f'{checkpoint} observes {state["mlp_extractor.policy_net.0.weight"].shape[1]} inputs; '
                             f'the env gives {model.policy.observation_space.shape[0]}')
        state['log_std'] = torch.full_like(state['log_std'], float(np.log(max_std)))
        model.policy.load_state_dict(state)
        print(f'started the actor from {checkpoint} (critic untrained, action noise {max_std})', flush=True)
        return
    with zipfile.ZipFile(checkpoint) as archive:
        state = torch.load(io.BytesIO(archive.read('policy.pth')), map_location='cpu')
    old_size = int(state['mlp_extractor.policy_net.0.weight'].shape[1])
    new_size = int(model.policy.observation_space.shape[0])
    if new_size < old_size:
        raise ValueError(f'{checkpoint} observes {old_size} inputs, more than the current {new_size}')
    state = widen_inputs(state, list(range(new_size - old_size)))
    state['log_std'] = torch.clamp(state['log_std'], max=float(np.log(max_std)))
    model.policy.load_state_dict(state)
    print(f'started from {checkpoint} ({old_size} -> {new_size} inputs)', flush=True)
