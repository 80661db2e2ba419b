"""InternUtopia's module path of ``VisualCube`` (see ``cube``)."""

from internutopia_extension.objects.cube import VisualCube

__all__ = ['VisualCube']
