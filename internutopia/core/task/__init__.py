"""Tasks decide reward and episode end for every slot running them, in one vectorized call."""

from internutopia.core.task.base import BaseTask

__all__ = ['BaseTask']
