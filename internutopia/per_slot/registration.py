"""Where the style of a registered class is decided: once, when it is registered.

:func:`install` hands each base class's registry (robots, controllers, sensors, tasks, metrics,
rewards) an adapter: for a class written InternUtopia's way (one object per slot, see
:mod:`internutopia.per_slot.style`) it names the per-slot adapter that builds its vectorized face;
for any other class it names nothing, and the class builds its own objects. The runner asks the
registry what builds a type and calls it, the same way for both styles.
"""

from __future__ import annotations

import threading

from internutopia.core.controller.base import BaseController
from internutopia.core.metric.base import BaseMetric
from internutopia.core.reward.base import BaseReward
from internutopia.core.robot.base import BaseRobot
from internutopia.core.runner.runner import Runner
from internutopia.core.sensor.base import BaseSensor
from internutopia.core.task.base import BaseTask
from internutopia.per_slot.controller import CONTROLLER_MARKS, SlotController, SlotControllerAdapter, controller_api
from internutopia.per_slot.metric import METRIC_MARKS, SlotMetric, SlotMetricAdapter
from internutopia.per_slot.reward import REWARD_MARKS, SlotReward, SlotRewardAdapter
from internutopia.per_slot.robot import SlotRobot, robot_in_slot, robot_maker
from internutopia.per_slot.runner import UpstreamRunner
from internutopia.per_slot.sensor import SENSOR_MARKS, SlotSensor, SlotSensorAdapter, sensor_api
from internutopia.per_slot.style import adapter_maker, builtin_api_maker, with_api
from internutopia.per_slot.task import TASK_MARKS, SlotTask, SlotTaskAdapter, task_in_slot, task_observations

#: The per-slot API (InternUtopia's methods and attributes) of each base class's per-slot objects.
PER_SLOT_APIS: dict[type, type] = {BaseRobot: SlotRobot, BaseController: SlotController, BaseSensor: SlotSensor,
                                   BaseTask: SlotTask, BaseMetric: SlotMetric, BaseReward: SlotReward}

_lock = threading.Lock()
_installed = False


def install() -> None:
    """Have the registries run InternUtopia-style classes through the per-slot adapters (once per
    process; classes registered before and after alike)."""
    global _installed
    with _lock:
        if _installed:
            return
        BaseRobot.registry.adapt_with(robot_maker)
        # Each adapter is built as adapter(<what the core passes>, instance class, <what it needs from above>).
        # (a controller or sensor class built on a built-in: the built-in behind the adapter, the
        # instances' API that of the built-in's upstream twin: forward(), an ICamera)
        BaseController.registry.adapt_with(
            builtin_api_maker(BaseController, controller_api, CONTROLLER_MARKS, SlotControllerAdapter, robot_in_slot))
        BaseSensor.registry.adapt_with(builtin_api_maker(BaseSensor, sensor_api, SENSOR_MARKS, SlotSensorAdapter, robot_in_slot))
        BaseTask.registry.adapt_with(adapter_maker(BaseTask, SlotTask, TASK_MARKS, SlotTaskAdapter))
        BaseMetric.registry.adapt_with(adapter_maker(BaseMetric, SlotMetric, METRIC_MARKS, SlotMetricAdapter, task_observations))
        BaseReward.registry.adapt_with(adapter_maker(BaseReward, SlotReward, REWARD_MARKS, SlotRewardAdapter, task_in_slot))
        _installed = True


def per_slot_face(cls: type) -> type | None:
    """What a subclass of ``cls`` written InternUtopia's way has: ``cls`` with its family's per-slot
    API in front; for the runner, the runner ``env.runner`` is (``None`` for other classes)."""
    if issubclass(cls, Runner):
        return UpstreamRunner
    for base, api in PER_SLOT_APIS.items():
        if issubclass(cls, base):
            # (mypy takes class objects for unhashable, python/mypy#11470: the cache's Hashable check)
            return with_api(api, cls)  # type: ignore[arg-type]
    return None


__all__ = ['PER_SLOT_APIS', 'install', 'per_slot_face']
