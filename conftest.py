"""Collection rules for the whole repository (``python -m pytest`` runs ``tests/`` and the doctests
of both packages, see ``[tool.pytest.ini_options]`` in ``pyproject.toml``)."""

from __future__ import annotations

import importlib.util
import os

# Doctests that build envs render nothing, but a module that draws must find a GL without a display.
os.environ.setdefault('MUJOCO_GL', 'egl')

#: Not collected for doctests: data and example scripts run when imported.
collect_ignore = ['tests/data', 'examples', 'docs']

#: Modules whose doctests need an optional extra; skipped where the extra is not installed, so
#: ``--doctest-modules`` works on a plain ``pip install -e '.[test]'``.
_OPTIONAL = {
    'ray': ['internutopia/core/distribution/env.py', 'internutopia/core/distribution/actors.py',
            'internutopia/bench/distributed.py', 'internutopia/core/distribution/extensions.py'],
    'stable_baselines3': ['internutopia/core/gym_vector/sb3.py', 'examples/train_ppo.py'],
    'tensordict': ['internutopia/core/gym_vector/rsl_rl_env.py'],  # (it comes with rsl-rl-lib, the train extra)
    'imageio': ['internutopia/core/util/video.py'],
    'mujoco_warp': ['internutopia/core/backend/warp'],
}
for _module, _paths in _OPTIONAL.items():
    if importlib.util.find_spec(_module) is None:
        collect_ignore.extend(_paths)
