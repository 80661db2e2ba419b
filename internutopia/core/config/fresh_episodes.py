"""Episodes a sampler built for the env alone: :class:`FreshEpisodes`.

A plain data type of the config layer, so that episode samplers (in extensions, the task layer)
can return one without looking up at the runner's queue
(:mod:`internutopia.core.episode_queue`), which is what honours its promise.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

from internutopia.core.config.task import TaskCfg

__all__ = ['FreshEpisodes']


class FreshEpisodes(list):
    """A batch of ``TaskCfg`` episodes a sampler built for the env alone, all of one family.

    A sampler (``f(rng)``, see :class:`~internutopia.core.gym_vector.episodes.EpisodeSource`)
    may return one instead of a plain list to promise two things: nobody else holds these
    objects (so the queue takes them without its private deep copy), and every episode with the
    same ``family`` token names the same types and files and has the same structure
    (:func:`~internutopia.core.scene.structure_key`: they differ in start poses and task
    parameters only), so a reset checks and keys one episode per family instead of each. It is
    a ``list`` in every other respect. ``family`` defaults to a new token (its own family);
    ``families`` gives each episode its own (episodes in several scenes: one family per scene).

    >>> from internutopia.core.config import TaskCfg
    >>> task = TaskCfg(type='SingleInferenceTask')
    >>> FreshEpisodes([task, task], family='demo').families
    ['demo', 'demo']
    >>> FreshEpisodes([task, task], families=['flat', 'rooms']).families
    ['flat', 'rooms']
    """

    def __init__(self, tasks: Iterable[TaskCfg] = (), family: Hashable | None = None,
                 families: Sequence[Hashable] | None = None) -> None:
        super().__init__(tasks)
        if families is not None and (family is not None or len(families) != len(self)):
            raise ValueError('give family (one for all) or families (one per episode, as many as the episodes), not both')
        self.family: Hashable = family if family is not None else object()
        #: Each episode's family (``families`` if given, else ``family`` for all).
        self.families: list[Hashable] = list(families) if families is not None else [self.family] * len(self)
