"""SingleInferenceTask: runs until the script stops it; reward 0, never terminates."""

from internutopia.core.task.base import BaseTask


@BaseTask.register('SingleInferenceTask')
class SingleInferenceTask(BaseTask):
    """An episode without an end: the script decides when to stop."""
