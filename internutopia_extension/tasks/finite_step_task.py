"""InternUtopia's module path of ``FiniteStepTask`` (see ``finite_step``)."""

from internutopia_extension.tasks.finite_step import FiniteStepTask

__all__ = ['FiniteStepTask']
