"""Semantic labels of a slot model's geoms: which thing (instance) each geom belongs to, and its class.

A slot's model is its parts attached under name prefixes (``scene/``, ``<robot name>/``,
``<object name>/``). Every geom belongs to the part named by the first component of its own name
or, for an unnamed geom, of the nearest named body above it (an unnamed geom of the world body
is the scene's). Labels come from:

- **scene prims**: the USD semantics a scene carries (Isaac's ``Semantics`` schema,
  ``semantic:<instance>:params:semanticType``/``semanticData``, or the newer
  ``semantics:labels:<taxonomy>`` lists; the ``class`` taxonomy first). A geom takes the label of
  the nearest prim at or above its prim that has one, and that prim is the instance. The scene
  converter keeps them in a text element of the scene's spec (:data:`SEMANTICS_TEXT`, JSON
  ``{geom name: [label, instance path]}``), which survives attaching and compiling;
- **roles** of scene geoms without semantics: a plane, or a geom whose name says ``ground`` or
  ``floor``, is ``floor``; a geom whose name says ``wall`` is ``wall``; each such geom is its own
  instance. Other unlabelled scene geoms are ``UNLABELLED``;
- **robots and objects**: one instance per part, labelled by the caller (:class:`SemanticTable`'s
  ``part_labels``: a robot by its type, an object by its config's ``label``, see
  ``docs/perception.md``).

Ids: instance ``0`` and semantic ``0`` are the background (nothing drawn), semantic ``1`` is
``UNLABELLED`` (drawn, no label; instance ``0`` too); labelled instances are numbered from 1 and
labels from 2, in sorted order, so a table is the same for the same model and labels.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass

import mujoco
import numpy as np

#: Name of the text element in which a converted scene keeps its prims' semantic labels.
SEMANTICS_TEXT = 'internutopia_semantics'
#: Name of the part that holds a slot's scene.
SCENE_PART = 'scene'
BACKGROUND = 'BACKGROUND'
UNLABELLED = 'UNLABELLED'
_FLOOR_WORDS = ('ground', 'floor')
_WALL_WORDS = ('wall',)


def add_semantics_text(spec: mujoco.MjSpec, labels: Mapping[str, tuple[str, str]]) -> None:
    """Keep ``labels`` (``{geom name: (label, instance path)}``) in ``spec`` (nothing when empty)."""
    if labels:
        spec.add_text(name=SEMANTICS_TEXT, data=json.dumps({k: list(v) for k, v in labels.items()}, sort_keys=True))


def usd_prim_label(prim) -> str | None:
    """The semantic class label authored on USD ``prim`` itself (``None`` when it has none).

    Reads Isaac's ``Semantics`` schema attributes (``semantic:<name>:params:semanticType`` =
    ``class`` and ``semanticData``) and the ``semantics:labels:<taxonomy>`` lists of the newer
    labels API, preferring the ``class`` taxonomy; several labels of one prim are joined by ``,``.
    """
    typed: dict[str, dict[str, str]] = {}
    lists: dict[str, str] = {}
    for attribute in prim.GetAttributes():
        name = attribute.GetName()
        if name.startswith('semantic:') and name.endswith(('params:semanticType', 'params:semanticData')):
            instance = name.split(':')[1]
            typed.setdefault(instance, {})[name.rsplit(':', 1)[1]] = str(attribute.Get() or '')
        elif name.startswith('semantics:labels:'):
            values = attribute.Get()
            if values:
                lists[name.split(':', 2)[2]] = ','.join(str(v) for v in values)
    by_type: dict[str, list[str]] = {}
    for entry in typed.values():
        data = entry.get('semanticData', '')
        if data:
            by_type.setdefault(entry.get('semanticType', 'class') or 'class', []).append(data)
    for taxonomy in ('class', *sorted(by_type)):
        if taxonomy in by_type:
            return ','.join(by_type[taxonomy])
    for taxonomy in ('class', *sorted(lists)):
        if taxonomy in lists:
            return lists[taxonomy]
    return None


def _role(name: str, geom_type: int) -> str | None:
    lowered = name.lower()
    if geom_type == mujoco.mjtGeom.mjGEOM_PLANE or any(w in lowered for w in _FLOOR_WORDS):
        return 'floor'
    if any(w in lowered for w in _WALL_WORDS):
        return 'wall'
    return None


def geom_parts(model: mujoco.MjModel) -> list[str]:
    """The part (name prefix without ``/``) of every geom of ``model``, ``''`` when none is named."""
    bodies = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or '' for b in range(model.nbody)]
    parts = []
    for geom in range(model.ngeom):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or ''
        body = int(model.geom_bodyid[geom])
        while not name and body > 0:
            name, body = bodies[body], int(model.body_parentid[body])
        if not name:  # an unnamed geom of the world body: only scenes put such geoms there
            parts.append(SCENE_PART)
            continue
        parts.append(name.split('/', 1)[0] if '/' in name else '')
    return parts


def _texts(model: mujoco.MjModel) -> dict[str, dict[str, list[str]]]:
    """Semantic texts of ``model`` by the name prefix they apply to."""
    out = {}
    data = bytes(model.text_data)
    for index in range(model.ntext):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_TEXT, index) or ''
        if name.endswith(SEMANTICS_TEXT):
            start, size = int(model.text_adr[index]), int(model.text_size[index])
            out[name[:-len(SEMANTICS_TEXT)]] = json.loads(data[start:start + size].rstrip(b'\0').decode())
    return out


@dataclass(frozen=True)
class SemanticTable:
    """Per geom of one slot model: its instance and semantic ids (see the module docstring).

    ``geom_instance``: ``int32 (ngeom + 1,)``, indexed by geom id + 1 (entry 0, "no geom", is 0).
    ``instance_semantic``: ``int32 (instances + 1,)``: semantic id of each instance id.
    ``instance_names``: name of each instance id (``''`` for 0): a robot's or object's name, a
    scene prim's path (``/scene/...``). ``labels``: label of each semantic id.
    """

    geom_instance: np.ndarray
    instance_semantic: np.ndarray
    instance_names: tuple[str, ...]
    labels: tuple[str, ...]

    @classmethod
    def build(cls, model: mujoco.MjModel, part_labels: Mapping[str, str | None]) -> SemanticTable:
        """The table of ``model`` with robots and objects labelled by ``part_labels`` (part name -> label;
        a part not there, or labelled ``None`` or ``''``, is unlabelled)."""
        texts = _texts(model)
        names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or '' for g in range(model.ngeom)]
        parts = geom_parts(model)
        geom_key: list[tuple[str, str] | None] = []  # (label, instance name) per geom
        for geom, (name, part) in enumerate(zip(names, parts, strict=True)):
            key: tuple[str, str] | None = None
            for prefix, table in texts.items():
                if name.startswith(prefix) and name[len(prefix):] in table:
                    label, instance = table[name[len(prefix):]]
                    key = (label, '/' + prefix + instance.lstrip('/'))
                    break
            if key is None and part == SCENE_PART:
                role = _role(name, int(model.geom_type[geom]))
                key = (role, '/' + name) if role else None
            elif key is None and part:
                given = part_labels.get(part)
                key = (given, part) if given else None
            geom_key.append(key)
        labels = (BACKGROUND, UNLABELLED, *sorted({k[0] for k in geom_key if k is not None}))
        instances = ('', *sorted({k[1] for k in geom_key if k is not None}))
        label_id = {label: i for i, label in enumerate(labels)}
        instance_id = {name: i for i, name in enumerate(instances)}
        geom_instance = np.zeros(model.ngeom + 1, dtype=np.int32)
        instance_semantic = np.zeros(len(instances), dtype=np.int32)
        for geom, found in enumerate(geom_key):
            if found is not None:
                thing = instance_id[found[1]]
                geom_instance[geom + 1] = thing
                instance_semantic[thing] = label_id[found[0]]
        return cls(geom_instance, instance_semantic, instances, labels)

    def instance_image(self, geom_image: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Instance ids ``int32 (..., H, W)`` of a geom-id image (``-1``: nothing drawn): one lookup."""
        return np.take(self._by_geom_id(self.geom_instance), geom_image, out=out, mode='wrap')

    @staticmethod
    def _by_geom_id(table: np.ndarray) -> np.ndarray:
        # A table indexed by geom id + 1, rolled so that it is indexed by the geom id itself, with
        # -1 (nothing drawn) wrapping around to the last entry: no "+ 1" pass over the image.
        return np.roll(table, -1)

    @functools.cached_property
    def geom_semantic(self) -> np.ndarray:
        """Semantic id of each geom, ``int32 (ngeom + 1,)`` indexed by geom id + 1: 0 for "no
        geom", 1 for an unlabelled geom."""
        semantic = self.instance_semantic[self.geom_instance]
        semantic[1:][semantic[1:] == 0] = 1
        return semantic

    def semantic_image(self, geom_image: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Semantic ids ``int32 (..., H, W)`` of a geom-id image (0 background, 1 unlabelled): one lookup."""
        return np.take(self._by_geom_id(self.geom_semantic), geom_image, out=out, mode='wrap')

    def id_to_labels(self) -> dict[str, dict[str, str]]:
        """Semantic ids to labels, as Isaac's annotators give them: ``{'2': {'class': 'wall'}, ...}``."""
        return {str(i): {'class': label} for i, label in enumerate(self.labels)}

    def instance_id_to_labels(self) -> dict[str, str]:
        """Instance ids to instance names (``{'1': 'h1', '2': '/scene/World/Walls/WallNorth'}``)."""
        return {str(i): name if i else BACKGROUND for i, name in enumerate(self.instance_names)}

    def instance_id_to_semantics(self) -> dict[str, dict[str, str]]:
        """Instance ids to their labels (``{'1': {'class': 'H1Robot'}, ...}``)."""
        return {str(i): {'class': self.labels[int(s)]} for i, s in enumerate(self.instance_semantic) if i}


__all__ = ['BACKGROUND', 'SCENE_PART', 'SEMANTICS_TEXT', 'UNLABELLED', 'SemanticTable', 'add_semantics_text', 'geom_parts',
           'usd_prim_label']
