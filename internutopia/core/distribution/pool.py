"""``ActorPool``: the Ray side of a ``DistributedEnv``: Ray itself, one episode-queue actor and
``proc_num`` runner actors, each started, awaited, replaced and killed here.

:class:`~internutopia.core.distribution.runners.RayRunners` drives the episodes over this pool
(which slot holds what, requeues, records); the pool only knows actors.
"""

from __future__ import annotations

from typing import Any

from internutopia.core.config import DistributedConfig
from internutopia.core.distribution.actors import QueueActor, RunnerActor
from internutopia.core.distribution.connect import connect
from internutopia.core.distribution.extensions import Extensions

__all__ = ['ActorPool', 'import_ray']


def import_ray() -> Any:
    """The ``ray`` module, or an ``ImportError`` saying how to install it."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("a DistributedConfig needs Ray: pip install 'internutopia[ray]' (ray>=2.9)") from exc
    return ray


class ActorPool:
    """Ray (connected to or started), the queue actor and ``proc_num`` runner actors.

    Args:
        config: the env's :class:`DistributedConfig`.
        extensions: the extensions every actor imports first.
        runner_config: the pickled config each runner builds its world from.
        packed_source: the pickled episode source the queue actor serves.

    Raises:
        RuntimeError: an actor could not be placed or failed to start within
            ``startup_timeout_s``; whatever was started is torn down again.
    """

    def __init__(self, config: DistributedConfig, extensions: Extensions, runner_config: bytes, packed_source: bytes) -> None:
        ray = import_ray()
        self._config = config
        self._dist = config.distribution_config
        self._extensions = extensions
        self._runner_config = runner_config
        self.owns_ray = False
        #: GPUs reserved per runner: the config's, or none when the machine has fewer and the
        #: physics runs on CPU (MuJoCo needs none; InternUtopia scripts ask for some for Isaac Sim).
        self.gpus_per_proc = self._dist.gpu_num_per_proc
        #: The queue actor (``None`` once torn down).
        self.queue: Any = None
        #: The runner actors, by runner id (a restarted runner's entry is its new actor).
        self.actors: list[Any] = []
        #: Per runner, its pending ``ready`` call (``None`` once it answered).
        self.ready: list[Any] = []
        #: How many times each runner was replaced.
        self.restarts = [0] * self._dist.proc_num
        try:
            self.owns_ray, self.gpus_per_proc = connect(ray, config)
            queue_cls = ray.remote(QueueActor).options(num_cpus=0, max_restarts=0)
            self._runner_cls = ray.remote(RunnerActor).options(
                num_cpus=self._dist.cpu_num_per_proc, num_gpus=self.gpus_per_proc, max_restarts=0)
            self.queue = queue_cls.remote(extensions, packed_source)
            self.get(self.queue.size.remote(), 'the episode queue actor', startup=True)
            self.actors = [self._new_runner(r) for r in range(self._dist.proc_num)]
            self.ready = [actor.ready.remote() for actor in self.actors]
            for r in range(self._dist.proc_num):
                self.wait_ready(r)
        except BaseException:
            self.teardown()
            raise

    def get(self, ref: Any, what: str, startup: bool = False) -> Any:
        """``ray.get(ref)``; at start-up bounded by ``startup_timeout_s``, with errors that name ``what``."""
        import ray

        try:
            return ray.get(ref, timeout=self._dist.startup_timeout_s if startup else None)
        except ray.exceptions.GetTimeoutError:
            raise RuntimeError(
                f'{what} did not start within startup_timeout_s={self._dist.startup_timeout_s}s: the cluster cannot '
                f'place it (each runner asks for num_cpus={self._dist.cpu_num_per_proc}, '
                f'num_gpus={self._dist.gpu_num_per_proc}; available: {ray.available_resources()})') from None
        except ray.exceptions.RayActorError as exc:
            if startup:
                raise RuntimeError(f'{what} failed to start: {exc}') from None
            raise

    def _new_runner(self, runner_id: int) -> Any:
        return self._runner_cls.remote(self._extensions, self._runner_config, self.queue, runner_id)

    def wait_ready(self, runner_id: int) -> None:
        """Wait (at most ``startup_timeout_s``) until runner ``runner_id`` has built its world."""
        ref = self.ready[runner_id]
        if ref is not None:
            self.get(ref, f'runner {runner_id}', startup=True)
            self.ready[runner_id] = None

    def restart(self, runner_id: int) -> None:
        """Kill runner ``runner_id`` (if it is still there) and start a new one in its place."""
        import ray

        try:
            ray.kill(self.actors[runner_id], no_restart=True)
        except Exception:  # already gone
            pass
        self.actors[runner_id] = self._new_runner(runner_id)
        self.ready[runner_id] = self.actors[runner_id].ready.remote()
        self.restarts[runner_id] += 1

    def teardown(self) -> None:
        """Kill every actor, and shut Ray down if this pool started it (or connected to it)."""
        try:
            import ray
        except ImportError:  # pragma: no cover
            return
        if ray.is_initialized():
            for actor in [*self.actors, self.queue]:
                if actor is not None:
                    try:
                        ray.kill(actor, no_restart=True)
                    except Exception:
                        pass
            if self.owns_ray:
                ray.shutdown()
        self.actors, self.queue = [], None
        self.owns_ray = False
