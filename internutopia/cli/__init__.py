"""The ``internutopia`` command: run, validate and benchmark configs.

::

    internutopia run CONFIG.yaml [--steps N] [--env-num N] [--results PATH] [--set KEY=VALUE ...] [--record DIR]
                                 [--no-progress] [--json]
    internutopia validate CONFIG.yaml [CONFIG.yaml ...] [--set KEY=VALUE ...]
    internutopia view CONFIG.yaml [--port N] [--host ADDR] [--speed X] [--steps N] [--set KEY=VALUE ...]
                                 (a live web viewer: internutopia.viewer)
    internutopia bench [ARGS ...]          (the benchmark: internutopia.bench)

``run`` runs a config headless with a progress bar (episodes done / total and env-steps per
second; ``tqdm`` when it is installed, plain text on stderr otherwise). Each slot gets a scripted
policy chosen by its episode's task (:mod:`~internutopia.cli.policies`): ``move_to_point`` to the
task's ``goal`` when the task has a goal and the robot has that controller (for a point-nav task,
only its navigating robot); pick and place for a task with a ``target`` object and a
``goal_position`` and an arm with IK and gripper controllers; otherwise no command (robots stand
or stop). Episode results go to a JSON-lines file, one record per episode that ended, and a summary
(episodes finished, failed and diverged, metric means, env-steps/s) is printed at the end; the
exit status is 3 when an episode failed or diverged. Ctrl-C ends the run after the current step,
with the summary; a second Ctrl-C ends it at once. Both exit with status 130.

``--set KEY=VALUE`` (``run``, ``validate``, ``view``, and ``bench`` with ``--config``) changes a value of the
config before it is checked: ``--set env_num=4 --set task_configs.0.max_steps=100``
(:mod:`~internutopia.cli.overrides`).

``validate`` loads a config the way ``run`` does and reports every problem with its place: a file
that is not UTF-8 text, YAML syntax errors with line and column, unknown fields with their path
and the valid fields, bad values, unknown ``type`` names with the registered types, missing scene
or asset files (and folders given as files), and scenes and objects' files that do not load (malformed
MJCF or USD).

Relative file paths in a config (``scene_asset_path``, ``usd_path``) are looked up from the current
directory, then from the config file's folder and that folder's parent, so the configs in
``configs/`` run from anywhere in a checkout.

The package's modules: ``config_file`` (loading and validating a config file), ``overrides``
(``--set``), ``policies`` (what ``run`` sends each slot), ``run_command`` (the ``run`` command),
``view_command`` (the ``view`` command: a run watched in a browser), ``command_line`` (the command
line itself: parsing and dispatch, ``main``).
"""

from internutopia.cli.command_line import EXIT_EPISODES_FAILED, EXIT_ERROR, EXIT_OK, EXIT_USAGE, main
from internutopia.cli.config_file import ConfigError, load_config
from internutopia.cli.run_command import default_actions, run

__all__ = ['EXIT_EPISODES_FAILED', 'EXIT_ERROR', 'EXIT_OK', 'EXIT_USAGE', 'ConfigError', 'default_actions', 'load_config', 'main', 'run']
