"""InternUtopia's module path of the single-inference task (see ``single_inference``); upstream's class is named ``SimpleInferenceTask``."""

from internutopia_extension.tasks.single_inference import SingleInferenceTask

SimpleInferenceTask = SingleInferenceTask

__all__ = ['SimpleInferenceTask', 'SingleInferenceTask']
