"""Config class of ``Table``: a static lab table (a top on four legs) to set objects and an arm on."""

from __future__ import annotations

from pydantic import model_validator

from internutopia_extension.configs.objects.cube import _BoxCfg

#: Default full size (m): 1.2 m long (x), 0.8 m deep (y), top 0.75 m above its feet, a common
#: laboratory bench height.
TABLE_SIZE = (1.2, 0.8, 0.75)
#: Default colour of the top: light wood.
TABLE_COLOR = (0.76, 0.6, 0.42)


class TableCfg(_BoxCfg):
    """A static table: a top ``top_thickness`` thick on four legs, never moving, colliding.

    ``position`` is the point on the floor under the centre of the top (the table's feet stand at
    its height), so the top surface is at ``position[2] + scale[2]`` (:attr:`top_height`).
    ``scale`` is the full size in metres: length (x), depth (y) and height (z) of the top surface
    above the feet. ``color`` (rgb or rgba in [0, 1]) is the top's; the legs are a darker shade.
    The pose is state (a mocap body): episodes that move the table reuse the compiled world.
    """

    type: str = 'Table'
    scale: tuple[float, float, float] = TABLE_SIZE
    color: tuple[float, ...] | None = TABLE_COLOR
    top_thickness: float = 0.04
    leg_width: float = 0.05

    @model_validator(mode='after')
    def _parts_fit(self) -> TableCfg:
        length, depth, height = self.scale
        if not 0.005 <= self.top_thickness < height:
            raise ValueError(f'top_thickness must be at least 0.005 m and less than the height scale[2] = {height:g} m; '
                             f'got {self.top_thickness:g}')
        if not 0.005 <= self.leg_width <= min(length, depth) / 2:
            raise ValueError(f'leg_width must be 0.005 .. {min(length, depth) / 2:g} m (half the top\'s shorter side); '
                             f'got {self.leg_width:g}')
        return self

    @property
    def top_height(self) -> float:
        """Env-local height (m) of the top surface: where objects on the table rest."""
        return float(self.position[2] + self.scale[2])


__all__ = ['TABLE_COLOR', 'TABLE_SIZE', 'TableCfg']
