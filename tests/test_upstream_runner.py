"""``python -m internutopia.compat.upstream_tests``: runs a checkout's test scripts against this package."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from internutopia.compat import upstream_tests


def make_checkout(root):
    tests = root / 'tests'
    (tests / 'robots' / 'move').mkdir(parents=True)
    (tests / 'conftest.py').write_text('raise SystemExit(3)\n')  # plumbing, never run
    (tests / 'passes.py').write_text(textwrap.dedent('''
        import internutopia, os
        from omni.isaac.core.utils.rotations import euler_angles_to_quat
        q = euler_angles_to_quat((0.0, 0.0, 3.141592653589793))
        assert abs(abs(q[3]) - 1.0) < 1e-9
        assert os.path.dirname(internutopia.__file__).endswith('internutopia')
    '''))
    (tests / 'fails.py').write_text('raise RuntimeError("boom")\n')
    (tests / 'robots' / 'move' / 'test_helper.py').write_text('raise SystemExit(4)\n')  # imported by scripts, not run
    (tests / 'robots' / 'move' / 'walker.py').write_text('from internutopia_extension.configs.robots.nosuchbot import X\n')
    return root


def test_discovers_scripts_like_upstreams_ci(tmp_path):
    checkout = make_checkout(tmp_path)
    assert upstream_tests.discover(checkout) == ['tests/fails.py', 'tests/passes.py', 'tests/robots/move/walker.py']


def test_only_the_listed_edits_are_made():
    source = 'from omni.isaac.core.utils.rotations import quat_to_euler_angles\nimport omni.kit\n'
    edited, reasons = upstream_tests.apply_allowed_edits(source)
    assert edited == 'from internutopia.core.util.rotations import quat_to_euler_angles\nimport omni.kit\n'
    assert len(reasons) == 1


def test_runs_reports_and_exit_code(tmp_path):
    checkout = make_checkout(tmp_path)
    result = subprocess.run([sys.executable, '-m', 'internutopia.compat.upstream_tests', str(checkout), '--timeout', '120'],
                            capture_output=True, text=True, timeout=300)
    lines = result.stdout.splitlines()
    assert any(line.startswith('pass') and 'tests/passes.py' in line for line in lines), result.stdout + result.stderr
    assert any(line.startswith('fail') and 'tests/fails.py' in line and 'boom' in line for line in lines)
    assert any(line.startswith('absent') and 'walker.py' in line and 'nosuchbot' in line for line in lines)
    assert '1 of 2 scripts passed' in result.stdout and result.returncode == 1


def test_a_bare_clone_runs_its_heads_tests(tmp_path):
    work = make_checkout(tmp_path / 'work')
    git = ['git', '-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main']
    subprocess.run([*git, 'init', '-q', str(work)], check=True)
    subprocess.run([*git, '-C', str(work), 'add', '-A'], check=True)
    subprocess.run([*git, '-C', str(work), 'commit', '-qm', 'scripts'], check=True)
    (work / 'tests' / 'passes.py').unlink()  # not committed away: HEAD still has it
    bare = tmp_path / 'bare.git'
    subprocess.run([*git, 'clone', '-q', '--bare', str(work), str(bare)], check=True)
    assert upstream_tests.is_bare_repository(bare) and not upstream_tests.is_bare_repository(work)
    result = subprocess.run([sys.executable, '-m', 'internutopia.compat.upstream_tests', str(bare), '-k', 'passes'],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and '1 of 1 scripts passed' in result.stdout, result.stdout + result.stderr
    missing = subprocess.run([sys.executable, '-m', 'internutopia.compat.upstream_tests', str(bare), '--revision', 'nope'],
                             capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and 'cannot read tests/ at nope' in missing.stderr


def test_e2e_runs_upstreams_ci_wrapper_with_python_meaning_this_interpreter(tmp_path):
    """``--e2e``: upstream's tests/e2e_test.py starts ``python ./tests/X.py`` in a shell; that
    ``python`` is this interpreter (this package importable), the scripts carry the allowed edits,
    the file runs without upstream's conftest.py, and its exit code is pytest's."""
    checkout = make_checkout(tmp_path)
    tests = checkout / 'tests'
    (tests / 'conftest.py').write_text('raise RuntimeError("upstream conftest must not load")\n')
    (tests / 'edited.py').write_text('from omni.isaac.core.utils.rotations import euler_angles_to_quat\n'
                                     'print(euler_angles_to_quat((0.0, 0.0, 0.0)))\n')
    (tests / 'e2e_test.py').write_text(textwrap.dedent('''
        import subprocess

        def run(command):
            assert subprocess.run(command, shell=True).returncode == 0

        def test_passes():
            run('python ./tests/passes.py')

        def test_edited():
            run('python ./tests/edited.py')

        def test_fails():
            run('python ./tests/fails.py')
    '''))
    command = [sys.executable, '-m', 'internutopia.compat.upstream_tests', str(checkout), '--e2e']
    passing = subprocess.run([*command, '-k', 'passes', '-k', 'edited'], capture_output=True, text=True, timeout=300)
    assert passing.returncode == 0 and '2 passed' in passing.stdout, passing.stdout + passing.stderr
    everything = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert everything.returncode == 1 and '1 failed, 2 passed' in everything.stdout, everything.stdout
