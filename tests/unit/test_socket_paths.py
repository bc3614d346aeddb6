"""Unix socket paths are limited to 107 bytes: a deep data directory's servers get short aliases
in the temporary directory (storygraph.processes.short_socket_path). The graph store's alias is
the one it always had (a server started before the helper existed is found again), and the
encoder helper's differs from it."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from storygraph.store.falkordb_server import ServerPaths
from storygraph.text.encoder_server import socket_path


def test_a_short_data_directory_keeps_its_sockets_inside(tmp_path: Path) -> None:
    data = tmp_path / "d"
    assert ServerPaths.for_data_dir(data).socket == data.resolve() / "falkordb" / "falkordb.sock"
    assert socket_path(data) == data.resolve() / "cache" / "encoder.sock"


def test_a_deep_data_directory_gets_distinct_short_aliases(tmp_path: Path) -> None:
    data = tmp_path.joinpath(*["a-rather-long-folder-name"] * 5)
    root = data.resolve() / "falkordb"
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    store = ServerPaths.for_data_dir(data).socket
    assert store == Path(tempfile.gettempdir()) / f"storygraph-{digest}.sock"  # as before
    encoder = socket_path(data)
    assert encoder != store and len(str(encoder)) <= 100
    assert encoder.parent == Path(tempfile.gettempdir())
