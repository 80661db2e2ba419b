"""InternUtopia's module path of ``ManipulationTask`` (see ``manipulation``)."""

from internutopia_extension.tasks.manipulation import ManipulationTask

__all__ = ['ManipulationTask']
