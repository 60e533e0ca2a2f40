"""A Redis that answers PING but cannot take the start throttle's count: a read-only replica (a
managed Redis's reader endpoint named in STUDY_REDIS_URL by mistake). README, "Throttle": a
Redis the limits cannot use stops the server at start with the fix, rather than letting it
start and refuse every new participant (503) until someone reads the log."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest

from study import config
from study.server import create_app
from study.server.limit_store import LimitStoreUnavailable


@pytest.fixture
def replica_url(tmp_path, redis_url):
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    primary = redis_url.removeprefix("redis://").split("/")[0].split(":")
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path), "--replicaof", primary[0], primary[1]],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port, socket_timeout=1)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.RedisError:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail("the replica did not start")
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    process.terminate()
    process.wait(timeout=10)


def test_a_read_only_redis_stops_the_server_at_start_with_the_fix(study_folder, monkeypatch, replica_url):
    monkeypatch.setenv("STUDY_REDIS_URL", replica_url)

    with pytest.raises(LimitStoreUnavailable) as refused:
        create_app(config.load(study_folder), suggestion_engine=object())

    assert f"STUDY_REDIS_URL={replica_url}" in str(refused.value)
    assert "read only replica" in str(refused.value) and "unset STUDY_REDIS_URL" in str(refused.value)
