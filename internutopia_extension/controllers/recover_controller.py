"""InternUtopia's module path of the recover controller (see ``recover``)."""

from internutopia_extension.controllers.recover import RecoverController

__all__ = ['RecoverController']
