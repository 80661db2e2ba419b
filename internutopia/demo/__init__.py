"""This project's demos, under InternUtopia's module names: ``python -m internutopia.demo.NAME``.

Each demo is a short script a newcomer reads top to bottom: it builds a ``Config``, opens an env,
drives one robot and prints what it did (positions reached, metrics written). Run one headless::

    MUJOCO_GL=egl python -m internutopia.demo.h1_locomotion
    python -m internutopia.demo.h1_locomotion --steps 200      # a shorter run

Demos here (InternUtopia has the same names; its gr1 demo comes with that robot):

- :mod:`.h1_locomotion`: an H1 walks a three-point path;
- :mod:`.aliengo_locomotion`: an Aliengo trots to a point 4.2 m away and stands there;
- :mod:`.h1_traveled_distance`: an H1 with a head camera walks for one finite-step episode and
  writes its ``TraveledDistanceMetric`` record;
- :mod:`.g1_locomotion`: a G1 runs its walking policy through a scripted speed program (forward,
  turn, side-step);
- :mod:`.jetbot_locomotion`: a Jetbot at scale 5 follows a four-point path and settles at its end;
- :mod:`.franka_manipulation`: a Franka moves its hand to two IK targets and opens and closes its
  gripper, recording its joint actions with ``RecordingMetric``.
- :mod:`.franka_manipulation_mocap_teleop`: a Franka on a table follows a hand (motion-capture
  frames from a scripted hand, a mocap server, or a handle dragged in the web viewer).

The pattern every demo follows (copy it for a new robot's demo):

1. A module ``internutopia/demo/<robot>_<what>.py`` with a docstring saying what it shows and how
   to run it, a ``main(argv: list[str] | None = None) -> dict`` and
   ``if __name__ == '__main__': main()``.
2. ``args = demo_arguments(__doc__, default_steps=N).parse_args(argv)`` (from
   :mod:`internutopia.demo.launch`) gives ``--steps``; ``step_budget(args)`` is the step limit:
   ``--steps``, else the environment variable ``INTERNUTOPIA_DEMO_STEPS`` (what the tests set, to
   run every demo in a few seconds), else ``N`` when headless and no limit with a display (the
   window is the demo, as upstream's loop on ``env.simulation_app.is_running()``).
   Loop with ``for step in demo_steps(budget):`` and stop early when the demo's goal is met.
3. A robot that needs an optional extra: import its config inside ``main`` after
   ``require_extra('robot', '<RobotType>')`` so a missing extra is one line naming the
   ``pip install`` to run, not a traceback.
4. Print what happened (every few hundred steps and at the end), and return the same figures in a
   dict, which ``tests/test_demos.py`` checks (add the new demo to its table).
"""
