"""InternUtopia's module path of ``DynamicCube`` (see ``cube``)."""

from internutopia_extension.objects.cube import DynamicCube

__all__ = ['DynamicCube']
