"""Scripted policies for the built-in robots (examples, tests and the benchmark use them)."""

from internutopia_extension.policies.pick_place import ScriptedPickPlace

__all__ = ['ScriptedPickPlace']
