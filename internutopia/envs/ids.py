"""The Gymnasium ids and their registration (:func:`register_envs`; entry points by their
``internutopia.envs`` names)."""

from __future__ import annotations

ENV_IDS = {
    'internutopia/JetbotPointNav-v0': {'robot': 'jetbot'},
    'internutopia/H1PointNav-v0': {'robot': 'h1'},
    'internutopia/G1PointNav-v0': {'robot': 'g1'},
    'internutopia/AliengoPointNav-v0': {'robot': 'aliengo'},
    'internutopia/GR1PointNav-v0': {'robot': 'gr1'},
    'internutopia/H1WithHandPointNav-v0': {'robot': 'h1_with_hand'},
}
#: The Franka manipulation ids and their goals (``internutopia.envs.manipulation``).
MANIPULATION_IDS = {
    'internutopia/FrankaReach-v0': {'goal': 'reach'},
    'internutopia/FrankaPick-v0': {'goal': 'pick'},
    'internutopia/FrankaPickPlace-v0': {'goal': 'place'},
}

#: The H1 walking id (``internutopia.envs.locomotion``).
WALK_ID = 'internutopia/H1Walk-v0'
#: The Aliengo walking id (``internutopia.envs.locomotion``).
ALIENGO_WALK_ID = 'internutopia/AliengoWalk-v0'
#: The GR1 walking id (``internutopia.envs.locomotion``).
GR1_WALK_ID = 'internutopia/GR1Walk-v0'


def register_envs() -> None:
    """Register the ids with Gymnasium (idempotent)."""
    import gymnasium

    for env_id, kwargs in ENV_IDS.items():
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(id=env_id, entry_point='internutopia.envs:make_point_nav',
                           vector_entry_point='internutopia.envs:make_point_nav_vec', kwargs=dict(kwargs))
    for env_id, kwargs in MANIPULATION_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point='internutopia.envs.manipulation:make_manipulation',
                               vector_entry_point='internutopia.envs.manipulation:make_manipulation_vec', kwargs=dict(kwargs))
    if WALK_ID not in gymnasium.registry:
        gymnasium.register(id=WALK_ID, entry_point='internutopia.envs.locomotion:make_walk',
                           vector_entry_point='internutopia.envs.locomotion:make_walk_vec')
    if ALIENGO_WALK_ID not in gymnasium.registry:
        gymnasium.register(id=ALIENGO_WALK_ID, entry_point='internutopia.envs.locomotion:make_aliengo_walk',
                           vector_entry_point='internutopia.envs.locomotion:make_aliengo_walk_vec')
    if GR1_WALK_ID not in gymnasium.registry:
        gymnasium.register(id=GR1_WALK_ID, entry_point='internutopia.envs.locomotion:make_gr1_walk',
                           vector_entry_point='internutopia.envs.locomotion:make_gr1_walk_vec')
    if 'internutopia/Config-v0' not in gymnasium.registry:
        gymnasium.register(id='internutopia/Config-v0', entry_point='internutopia.envs:make_config',
                           vector_entry_point='internutopia.envs:make_config_vec')


def registered_ids() -> list[str]:
    """The ``internutopia/`` ids in Gymnasium's registry, sorted (those of :func:`register_envs`
    and any an extension registered under the prefix): what an error about an unknown id lists."""
    import gymnasium

    return sorted(env_id for env_id in gymnasium.registry if env_id.startswith('internutopia/'))


__all__ = ['ALIENGO_WALK_ID', 'ENV_IDS', 'GR1_WALK_ID', 'MANIPULATION_IDS', 'WALK_ID', 'register_envs', 'registered_ids']
