"""Physics backends. Each builds one world out of per-slot parts and steps it.

The env, tasks and extensions talk to a backend only through the :class:`~internutopia.core.backend.mujoco.world.MujocoWorld`
surface (build from slot parts, step, slot state ranges, render), so other engines can be added
behind the same contract.
"""
