"""Sensors mounted on robots; disabled sensors are never built."""

from internutopia.core.sensor.base import BaseSensor

__all__ = ['BaseSensor']
