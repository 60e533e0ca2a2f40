"""The per-address start throttle (study.server.throttle, entry_pages.start_allowed) under a
server listening on a dual-stack socket (`study serve --host ::`, gunicorn -b [::]:5000): the
operating system hands the app an IPv4 peer as an IPv4-mapped IPv6 address (::ffff:a.b.c.d).
A local reverse proxy on 127.0.0.1 is then ::ffff:127.0.0.1, still loopback (README,
"Throttle": loopback is not throttled), and a client is one address whichever way it is
written, so hosts bound to 0.0.0.0 and to :: count it under one limit. A local proxy on a
Unix socket (gunicorn -b unix:...) has no address at all, and is not throttled either."""

from __future__ import annotations

import logging

import pytest

from study import config
from study.server import create_app, proxy


def _app(study_folder, per_hour: int):
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace("[session]\n", f"[session]\nnew_sessions_per_ip_per_hour = {per_hour}\n"))
    return create_app(config.load(study_folder), suggestion_engine=object())


def _start(client, code: str, address: str) -> int:
    return client.get("/task", query_string={"access_code": code}, environ_base={"REMOTE_ADDR": address}).status_code


def test_a_local_proxy_seen_through_a_dual_stack_socket_is_not_throttled(study_folder):
    app = _app(study_folder, per_hour=3)
    client = app.test_client()

    statuses = [_start(client, f"writer-{i}", "::ffff:127.0.0.1") for i in range(6)]

    # Every writer behind the local proxy arrives from it: throttling it would stop the study.
    assert statuses == [302] * 6


def test_an_ipv4_client_has_one_limit_whether_written_as_ipv4_or_ipv4_mapped(study_folder):
    app = _app(study_folder, per_hour=3)
    client = app.test_client()

    statuses = [
        _start(client, "bot-0", "203.0.113.7"),  # a host listening on 0.0.0.0
        _start(client, "bot-1", "::ffff:203.0.113.7"),  # a host listening on ::
        _start(client, "bot-2", "203.0.113.7"),
        _start(client, "bot-3", "::ffff:203.0.113.7"),
    ]

    assert statuses == [302, 302, 302, 429]


def test_a_local_proxy_on_a_unix_socket_is_not_throttled(study_folder):
    # gunicorn -b unix:/run/study.sock behind nginx on the same machine: the peer has no IP
    # address (gunicorn gives REMOTE_ADDR ""), and only a process on this machine can connect.
    # Counted, every writer would share one address and the study would stop at the limit.
    app = _app(study_folder, per_hour=3)
    client = app.test_client()

    statuses = [_start(client, f"writer-{i}", "") for i in range(6)]

    assert statuses == [302] * 6


def test_the_address_printed_for_a_dual_stack_server_can_be_opened():
    from study.server.page_security import http_address

    assert http_address("::", 5000) == "http://[::]:5000"  # not http://:::5000
    assert http_address("127.0.0.1", 5000) == "http://127.0.0.1:5000"
    assert http_address("[::1]", 8080) == "http://[::1]:8080"


def test_an_ipv6_client_has_one_limit_across_the_addresses_of_its_network(study_folder):
    # An IPv6 client is handed a whole /64 (one home line, one phone): it can take a fresh
    # address for every request, so counted per address it would never meet the limit.
    app = _app(study_folder, per_hour=3)
    client = app.test_client()

    statuses = [_start(client, f"bot-{i}", f"2001:db8:5:7::{i + 1:x}") for i in range(4)]
    elsewhere = _start(client, "neighbour", "2001:db8:5:8::1")  # the next /64: another client

    assert statuses == [302, 302, 302, 429]
    assert elsewhere == 302


def test_a_client_forwarded_with_its_port_has_one_limit_across_its_connections(study_folder, monkeypatch):
    # Some load balancers (Azure's Application Gateway, IIS's ARR) forward the client as
    # "address:port", and a browser or a bot opens each connection from a new port: counted
    # under "address:port", every start was a new client and the limit never came.
    monkeypatch.setenv("STUDY_TRUSTED_PROXIES", "1")
    app = _app(study_folder, per_hour=3)
    client = app.test_client()

    def forwarded(code: str, address: str) -> int:
        return client.get("/task", query_string={"access_code": code}, headers={"X-Forwarded-For": address},
                          environ_base={"REMOTE_ADDR": "10.0.0.2"}).status_code  # fmt: skip

    ipv4 = [forwarded(f"bot-{i}", f"203.0.113.7:{50000 + i}") for i in range(4)]
    ipv6 = [forwarded(f"bot6-{i}", f"[2001:db8:5:7::1]:{50000 + i}") for i in range(4)]
    neighbour = forwarded("neighbour", "203.0.113.8:50000")

    assert ipv4 == [302, 302, 302, 429]
    assert ipv6 == [302, 302, 302, 429]
    assert neighbour == 302


@pytest.mark.parametrize("given", ["two", "\u00b2", "11"])  # "²" passes str.isdigit, not int()
def test_a_number_of_proxies_that_is_not_0_to_10_is_refused_naming_the_setting(monkeypatch, given):
    monkeypatch.setenv("STUDY_TRUSTED_PROXIES", given)
    with pytest.raises(proxy.ProxyConfigError, match="STUDY_TRUSTED_PROXIES=.*0 to 10"):
        proxy.trusted_proxies()


def test_a_local_proxy_whose_clients_are_not_trusted_is_named_to_the_operator_once(study_folder, caplog):
    # nginx on this machine without STUDY_TRUSTED_PROXIES: every writer is 127.0.0.1, which is
    # not throttled, so the hourly limit holds no one back; only the server log can say so.
    client = _app(study_folder, per_hour=3).test_client()
    forwarded = {"REMOTE_ADDR": "127.0.0.1"}

    with caplog.at_level(logging.WARNING, logger="study.server.entry_pages"):
        for i in range(3):
            client.get("/task", query_string={"access_code": f"writer-{i}"}, environ_base=forwarded,
                       headers={"X-Forwarded-For": f"203.0.113.{i}"})  # fmt: skip

    told = [record.getMessage() for record in caplog.records if "STUDY_TRUSTED_PROXIES=1" in record.getMessage()]
    assert len(told) == 1 and "limits no one" in told[0]

