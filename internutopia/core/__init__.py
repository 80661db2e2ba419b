"""The core of internutopia: config, envs, runner, episode queue, registries, base classes, backends.

(A regular package rather than a namespace package, so documentation tools can walk it.)
"""
