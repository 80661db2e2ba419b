"""A live web viewer for headless servers: ``internutopia view CONFIG.yaml`` or
:func:`attach_viewer` on an env of your own (needs the ``viewer`` extra, ``viser``).

See :mod:`internutopia.viewer.viewer` for what the page shows, :mod:`internutopia.viewer.pose_handle` for a
handle dragged in the page that a script reads (teleoperation), :mod:`internutopia.viewer.key_input` for keys
pressed in the page (keyboard teleoperation), and ``docs/getting-started.md``.
"""

from internutopia.viewer.key_input import ViewerKeys
from internutopia.viewer.pose_handle import PoseHandle
from internutopia.viewer.server import ViewerStartError, check_address
from internutopia.viewer.viewer import DEFAULT_PORT, Viewer, attach_viewer

__all__ = ['DEFAULT_PORT', 'PoseHandle', 'Viewer', 'ViewerKeys', 'ViewerStartError', 'attach_viewer', 'check_address']
