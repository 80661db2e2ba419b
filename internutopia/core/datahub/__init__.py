"""InternUtopia's ``internutopia.core.datahub``: a process-local :class:`~.datahub.DataHub`."""

from internutopia.core.datahub.datahub import DataHub

__all__ = ['DataHub']
