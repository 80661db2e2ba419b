"""The web viewer's life around the env: what a failed attach leaves (nothing), what closing it
first gives back (the env's own methods), the update the rate limit held back (made once the
script stops stepping), the address it reports, the last state ``internutopia view`` keeps, and
the checks of its pose handles."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip('viser', reason="the viewer comes with the 'viewer' extra")

from internutopia.viewer import PoseHandle, attach_viewer, check_address  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, SingleInferenceTaskCfg  # noqa: E402

WALK = {'h1': {'move_by_speed': [1.0, 0.0, 0.0]}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def can_bind(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(('127.0.0.1', port))
        except OSError:
            return False
        return True


def viewer_threads() -> list[str]:
    """Threads a viewer may leave behind: its helper and viser's server threads."""
    return [t.name for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()
            and ('viewer' in t.name or 'lambda' in t.name)]


@pytest.fixture
def h1_env(make_config):
    from internutopia.core.vec_env import Env

    task = SingleInferenceTaskCfg(robots=[H1RobotCfg(controllers=[move_by_speed_cfg])])
    env = Env(make_config([task] * 3, env_num=2, offset=4.0))
    yield env
    env.close()


def drawn_base(viewer, slot: int) -> np.ndarray:
    """Where the page draws slot ``slot``'s robot base (world frame)."""
    return viewer._positions[slot][1]


def true_base(viewer, env, slot: int) -> np.ndarray:
    return env.runner.world.pack(slot).body_poses(slot)[0][1] + viewer.origins[slot]


def test_a_failed_attach_leaves_no_server_and_a_closed_env_is_refused(h1_env):
    before = viewer_threads()
    port = free_port()
    with pytest.raises(ValueError, match=r"needs an internutopia.core.vec_env.Env; got SimpleNamespace \(no 'runner'\)"):
        attach_viewer(SimpleNamespace(env_num=1, config=SimpleNamespace(env_offset_size=2.0)), host='127.0.0.1', port=port)
    with pytest.raises(ValueError, match=r"no 'env_num'"):
        attach_viewer(object(), host='127.0.0.1', port=port)
    with pytest.raises(ValueError, match=r'max_rate_hz must be a number >= 0'):
        attach_viewer(h1_env, host='127.0.0.1', port=port, max_rate_hz=-1)
    h1_env.close()
    with pytest.raises(ValueError, match='this Env is closed'):
        attach_viewer(h1_env, host='127.0.0.1', port=port)
    assert can_bind(port) and viewer_threads() == before  # (no server started, none left)


def test_closing_the_viewer_first_gives_the_env_its_own_methods_back(h1_env):
    h1_env.reset()
    viewer = attach_viewer(h1_env, host='127.0.0.1', port=free_port(), max_rate_hz=0)
    assert {'reset', 'reset_arrays', 'step', 'step_arrays', 'warm_up', 'close'} <= set(vars(h1_env))
    h1_env.step([WALK] * 2)
    assert viewer.steps == 1
    viewer.close()
    assert not {'reset', 'reset_arrays', 'step', 'step_arrays', 'warm_up', 'close'} & set(vars(h1_env))
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # (viser warns of messages queued on a stopped server)
        for _ in range(5):
            h1_env.step([WALK] * 2)
    assert viewer.steps == 1 and not viewer.update(force=True)
    viewer.close()  # (twice: nothing)
    assert can_bind(viewer.port)
    time.sleep(0.2)
    assert 'internutopia-viewer-updates' not in viewer_threads()


def test_a_viewer_attached_on_top_of_another_outlives_its_close(h1_env):
    h1_env.reset()
    first = attach_viewer(h1_env, host='127.0.0.1', port=free_port(), max_rate_hz=0)
    second = attach_viewer(h1_env, host='127.0.0.1', port=free_port(), max_rate_hz=0)
    first.close()  # (its wrappers are under the second's: they pass the calls through)
    h1_env.step([WALK] * 2)
    assert (first.steps, second.steps) == (0, 1)
    np.testing.assert_allclose(drawn_base(second, 0), true_base(second, h1_env, 0), atol=1e-6)
    h1_env.close()
    assert first.closed and second.closed and can_bind(first.port) and can_bind(second.port)


def test_the_update_the_rate_limit_held_back_is_made_when_the_script_stops_stepping(h1_env):
    h1_env.reset()
    viewer = attach_viewer(h1_env, host='127.0.0.1', port=free_port(), max_rate_hz=5)  # one update per 0.2 s
    for _ in range(30):  # (well inside 0.2 s: the first step's update is the only one made now)
        h1_env.step([WALK] * 2)
    assert viewer.steps == 30
    time.sleep(0.6)  # the script pauses: nothing of its own updates the page
    for slot in (0, 1):
        np.testing.assert_allclose(drawn_base(viewer, slot), true_base(viewer, h1_env, slot), atol=1e-6)
    obs, _ = h1_env.reset_arrays([0])  # (a reset through the array API is followed too)
    np.testing.assert_allclose(drawn_base(viewer, 0), true_base(viewer, h1_env, 0), atol=1e-6)
    assert np.linalg.norm(drawn_base(viewer, 0)[:2] - viewer.origins[0][:2]) < 0.05  # back at its start


def test_the_url_is_on_the_host_the_page_is_served_on(h1_env):
    viewer = attach_viewer(h1_env, host='127.0.0.1', port=free_port())
    assert viewer.url == f'http://127.0.0.1:{viewer.port}'
    with urllib.request.urlopen(viewer.url, timeout=10) as page:
        assert page.status == 200
    everywhere = attach_viewer(h1_env, host='0.0.0.0', port=free_port())
    assert everywhere.url == f'http://localhost:{everywhere.port}'


def test_check_address_takes_a_numpy_port():
    port = free_port()
    assert check_address('127.0.0.1', np.int64(port)) == port
    assert type(check_address('127.0.0.1', np.int32(port))) is int


def test_pose_handles_check_their_arguments_and_names(h1_env):
    viewer = attach_viewer(h1_env, host='127.0.0.1', port=free_port())
    for bad, message in [({'slot': True}, 'slot must be one of'), ({'slot': 2}, 'slot must be one of'),
                         ({'position': 1.0}, 'position must be 3 finite numbers'),
                         ({'position': (0, 0, np.nan)}, 'position must be 3 finite numbers'),
                         ({'wxyz': (0, 0, 0, 0)}, 'wxyz must be a rotation quaternion'),
                         ({'scale': -1}, 'scale must be a finite number > 0')]:
        with pytest.raises(ValueError, match=message):
            PoseHandle(viewer, name='bad', **bad)
    handle = PoseHandle(viewer, position=(0.1, 0.0, 0.5), wxyz=(2.0, 0.0, 0.0, 0.0))
    np.testing.assert_allclose(handle.wxyz, [1.0, 0.0, 0.0, 0.0])  # (normalized)
    with pytest.raises(ValueError, match=r"a pose handle named 'teleop' is on this page already"):
        PoseHandle(viewer, position=(0.3, 0.0, 0.5))
    other = PoseHandle(viewer, position=(0.3, 0.0, 0.5), slot=1, name='other')
    with pytest.raises(ValueError, match='position must be 3 finite numbers'):
        other.position = (1.0, 2.0)
    handle.remove()
    handle.remove()  # (twice: nothing)
    np.testing.assert_allclose(other.position, [0.3, 0.0, 0.5])
    assert PoseHandle(viewer, name='teleop').name == 'teleop'  # (its name is free again)


def test_view_keeps_the_last_episodes_on_the_page_once_every_episode_has_finished(tmp_path, monkeypatch):
    import internutopia.cli.view_command as view_command
    from internutopia.core.config import Config

    short = FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.05))])
    longer = short.update(max_steps=8)
    path = tmp_path / 'two.yaml'
    Config(env_num=2, env_offset_size=4.0, task_configs=[short, longer]).to_yaml(path)
    viewers = []
    monkeypatch.setattr(view_command, 'attach_viewer',
                        lambda env, **kw: viewers.append(attach_viewer(env, **kw)) or viewers[-1])
    logged: list[str] = []
    taken = view_command.view(str(path), port=free_port(), host='127.0.0.1', speed=0, steps=20, log=logged.append)
    assert taken == 8 and any('every episode has finished' in line for line in logged)
    (viewer,) = viewers
    # Slot 0's episode ended while slot 1's ran (its slot emptied: nothing more to run there);
    # slot 1's was the last: the page still draws its robot where it stopped.
    assert sorted(viewer._positions) == [1]
    assert [slots for nodes in viewer._packs.values() for slots in [nodes.slots]] == [(1,)]
    # The pack's nodes were made again for slot 1 alone: the page holds those meshes and their
    # node, and nothing left over from the two-slot pack (an empty node under /packs each time).
    (nodes,) = viewer._packs.values()
    under_packs = sorted(name for name in viewer.server.scene._handle_from_node_name if name.startswith('/packs/'))
    assert under_packs == sorted([nodes.root] + [f'{nodes.root}/{index}' for index in range(len(nodes.handles))])
