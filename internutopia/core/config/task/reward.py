"""Reward configs (InternUtopia's ``internutopia.core.config.task.reward``)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, model_validator

from internutopia.core.config.base import TypedCfg


class RewardCfg(TypedCfg):
    """A reward of a task; ``reward_settings`` are the reward's own parameters.

    ``reward_type`` is InternUtopia's name of ``type``: give either (or both, equal); both read the
    same, and changing either (by assignment or ``update``) changes both.

    >>> RewardCfg(reward_type='Progress').type, RewardCfg(type='Progress').reward_type
    ('Progress', 'Progress')
    >>> RewardCfg(reward_type='Progress').update(reward_type='Other').type
    'Other'

    """

    model_config = ConfigDict(extra='allow')  # as InternUtopia's: unknown keys are kept (with a warning)
    _type_alias: ClassVar[str | None] = 'reward_type'

    type: str
    reward_type: str | None = None
    reward_settings: dict[str, Any] | None = None

    @classmethod
    def _nones_resolved(cls, data: dict) -> tuple[dict, list[str]]:
        # ``type=None`` beside a ``reward_type`` is "not given" (InternUtopia's RewardCfg has no
        # ``type``; it keeps one given as an unknown key): the type is the reward_type.
        if 'type' in data and data['type'] is None and data.get('reward_type') is not None:
            data = {key: value for key, value in data.items() if key != 'type'}
        return super()._nones_resolved(data)

    @model_validator(mode='before')
    @classmethod
    def _type_from_reward_type(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get('reward_type') is not None:
            given = data.get('type')
            if given is not None and given != data['reward_type']:
                raise ValueError(f"type {given!r} and reward_type {data['reward_type']!r} name the same thing; give one")
            if given is None:
                data = {**data, 'type': data['reward_type']}
        return data

    def update(self, **changes: Any) -> Any:
        """A validated copy with ``changes`` (see :meth:`BaseCfg.update`); a new ``type`` or
        ``reward_type`` given alone changes both."""
        for name, other in (('type', 'reward_type'), ('reward_type', 'type')):
            if changes.get(name) is not None and other not in changes:
                changes = {**changes, other: changes[name]}
        return super().update(**changes)

    def __setattr__(self, name: str, value: Any) -> None:
        # ``type`` and ``reward_type`` are one setting: assigning either sets both (checked together).
        if name in ('type', 'reward_type') and value is not None:
            other = 'reward_type' if name == 'type' else 'type'
            before = self.__dict__.get(other)
            self.__dict__[other] = value  # (validated with ``name`` just below; restored if that fails)
            try:
                super().__setattr__(name, value)
            except Exception:
                self.__dict__[other] = before
                raise
            self.__pydantic_fields_set__.add(other)
            return
        super().__setattr__(name, value)

    @model_validator(mode='after')
    def _reward_type_from_type(self) -> RewardCfg:
        if self.reward_type != self.type:
            object.__setattr__(self, 'reward_type', self.type)
        return self


__all__ = ['RewardCfg']
