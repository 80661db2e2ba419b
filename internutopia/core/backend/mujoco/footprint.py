"""What a MuJoCo world's structures take in memory, estimated from their compiled models.

A structure costs memory three ways, each estimated from its built ``MjModel``:

- **its compile**, a peak that passes: the parsed specs with their meshes, the compiler's buffers
  and the model; :func:`compile_peak_bytes`, proportional to the model's buffer (``nbuffer``),
  which the meshes dominate for a robot like H1 (52 MB of 53) where the model keeps its visuals
  (a world's physics models need not: :mod:`~internutopia.core.backend.mujoco.visuals`). Files parsed for the first time in
  the process cost more (their parsed specs are kept to copy later): :class:`MeshesSeen` tells
  which meshes are new;
- **its model**, held while the structure is in use or cached: ``nbuffer``, once more for the
  copy its pack's batch holds;
- **its slots' physics state**: :func:`pack_bytes_per_slot` per slot;
- **a renderer**, for the first structure with cameras in the process: the offscreen GL context
  and the libraries behind it (:func:`renderer_bytes`).

The factors were measured on Linux x86-64 with MuJoCo 4.0 (resident memory, ``VmRSS``, before and
after each stage; docs/reliability.md has the figures and the command).
"""

from __future__ import annotations

import mujoco

import internutopia.core.backend.state as state

#: The fields a pack binds per slot (the world's state fields and its outputs).
_BOUND_FIELDS = (*state.STATE_FIELDS, 'qacc_warmstart', *state.OUTPUT_FIELDS)

#: Peak bytes a compile adds, per byte of the compiled model's buffer, for files parsed before
#: (H1: 170 MB for a 51.9 MB model, 3.3x).
COMPILE_PEAK_PER_MODEL_BYTE = 3.3
#: What a first parse adds on top, per byte of the model's buffer its new meshes make up (H1: 60
#: to 70 MB more the first time in a process).
FIRST_PARSE_PER_MODEL_BYTE = 1.25
#: Resident bytes of the per-thread ``MjData`` a pack's batch steps in (its arena is touched only
#: as far as a step needs: about 0.4 MB for a Jetbot slot).
THREAD_DATA_BYTES = 0.4e6


#: Resident bytes the first offscreen GL context adds to a process, with what it loads (measured
#: with EGL on Mesa's software renderer: 111 MB for a Jetbot camera at 128x128 or 256x256, one
#: slot or 16; a GPU driver's figure differs).
RENDER_CONTEXT_BYTES = 111e6


def pack_bytes_per_slot(model: mujoco.MjModel) -> float:
    """Estimated bytes a pack's batch holds per slot: the bound rows plus the full physics state
    (measured: about 1.1 times this for an H1 or a G1)."""
    sizes = {'time': 1, 'qpos': model.nq, 'qvel': model.nv, 'act': model.na, 'ctrl': model.nu,
             'qfrc_applied': model.nv, 'xfrc_applied': 6 * model.nbody, 'mocap_pos': 3 * model.nmocap,
             'mocap_quat': 4 * model.nmocap, 'qacc_warmstart': model.nv, 'sensordata': model.nsensordata}
    full = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    return 1.25 * 8 * (sum(sizes.get(name, 0) for name in _BOUND_FIELDS) + full)


def pack_fixed_bytes(model: mujoco.MjModel, threads: int) -> float:
    """Bytes a pack holds whatever its slot count: the batch's copy of the model, one ``MjData``
    per thread, and one for forward passes on the calling thread (``Pack.forward``)."""
    return float(model.nbuffer) + (threads + 1) * THREAD_DATA_BYTES


def pack_bytes(model: mujoco.MjModel, env_num: int, threads: int) -> float:
    """Estimated bytes of a pack of ``model`` for ``env_num`` slots stepped on ``threads`` threads."""
    return pack_fixed_bytes(model, threads) + env_num * pack_bytes_per_slot(model)


class MeshesSeen:
    """The meshes compiled so far in this process (by name and size), to tell which of a new
    model's meshes come from files parsed for the first time."""

    _seen: set[tuple[str, int]] = set()

    @classmethod
    def new_fraction(cls, model: mujoco.MjModel) -> float:
        """The share of ``model``'s mesh vertices not seen in a model before (0 without meshes);
        records them as seen."""
        if model.nmesh == 0:
            return 0.0
        names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_MESH, i) or str(i) for i in range(model.nmesh)]
        sizes = [int(n) for n in model.mesh_vertnum]
        new = sum(size for name, size in zip(names, sizes, strict=True) if (name, size) not in cls._seen)
        cls._seen.update(zip(names, sizes, strict=True))
        return new / max(sum(sizes), 1)


class RendererSeen:
    """Whether a structure with cameras was estimated in this process (its GL context is made once)."""

    counted = False


def renderer_bytes(model: mujoco.MjModel) -> float:
    """What drawing ``model``'s cameras adds: the GL context, the first time a model with cameras
    is estimated in this process; nothing after, or for a model without cameras."""
    if model.ncam == 0 or RendererSeen.counted:
        return 0.0
    RendererSeen.counted = True
    return RENDER_CONTEXT_BYTES


def compile_peak_bytes(model: mujoco.MjModel) -> float:
    """Estimated peak bytes the compile that made ``model`` added (the model included); the
    first call for a model whose meshes are new counts their first parse too."""
    factor = COMPILE_PEAK_PER_MODEL_BYTE + FIRST_PARSE_PER_MODEL_BYTE * MeshesSeen.new_fraction(model)
    return factor * float(model.nbuffer)


__all__ = ['COMPILE_PEAK_PER_MODEL_BYTE', 'FIRST_PARSE_PER_MODEL_BYTE', 'RENDER_CONTEXT_BYTES', 'THREAD_DATA_BYTES', 'MeshesSeen',
           'RendererSeen', 'compile_peak_bytes', 'pack_bytes', 'pack_bytes_per_slot', 'pack_fixed_bytes', 'renderer_bytes']
