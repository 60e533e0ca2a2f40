"""Keyed, namespaced pseudonyms and the encrypted re-identification table."""

from __future__ import annotations

import re

from study.release.keys import init_keyfile
from study.release.pii import WORKER_ID_PATTERN
from study.release.pseudonyms import ReidentificationTable, is_pseudonym, pseudonym

WORKER = "AFXYOGWOLRAFK6"


def test_a_pseudonym_is_stable_for_one_key_and_namespace(key):
    assert pseudonym(key, WORKER, "coauthor") == pseudonym(key, WORKER, "coauthor")
    assert pseudonym(key, f"  {WORKER}\n", "coauthor") == pseudonym(key, WORKER, "coauthor")


def test_pseudonyms_differ_across_namespaces_keys_and_workers(key, tmp_path):
    other_key = init_keyfile(tmp_path / "other.key")
    base = pseudonym(key, WORKER, "coauthor")
    assert pseudonym(key, WORKER, "another-study") != base
    assert pseudonym(other_key, WORKER, "coauthor") != base
    assert pseudonym(key, "AFX0A2X1X7HVKP", "coauthor") != base


def test_a_pseudonym_is_not_a_plain_hash_and_does_not_look_like_a_worker_id(key):
    import hashlib

    alias = pseudonym(key, WORKER, "coauthor")
    assert is_pseudonym(alias)
    assert alias[1:] not in hashlib.sha256(WORKER.encode()).hexdigest()
    assert not re.search(WORKER_ID_PATTERN, alias)


def test_the_reidentification_table_maps_back_and_stays_encrypted(key):
    table = ReidentificationTable(key)
    alias = table.issue(WORKER, "coauthor")
    table.save()
    assert WORKER.encode() not in table.path.read_bytes()
    again = ReidentificationTable(key)
    assert again.lookup(alias) == [("coauthor", WORKER)]
    assert again.worker_ids() == {WORKER}
    assert again.lookup("w" + "0" * 20) == []


def test_released_session_ids_are_keyed_stable_and_map_back(key, tmp_path):
    from study.release.pseudonyms import released_session_id

    live = "0123456789abcdef0123456789abcdef"
    released = released_session_id(key, live, "coauthor")
    assert re.fullmatch(r"[0-9a-f]{32}", released) and released != live  # CoAuthor's shape
    assert released == released_session_id(key, live, "coauthor")  # stable across versions
    assert released_session_id(key, live, "pilot") != released
    assert released_session_id(init_keyfile(tmp_path / "o.key"), live, "coauthor") != released
    assert released != pseudonym(key, live, "coauthor")[1:]
    table = ReidentificationTable(key)
    assert table.issue_session(live, "coauthor") == released
    table.save()
    again = ReidentificationTable(key)
    assert again.lookup_session(released) == [("coauthor", live)]
    assert again.session_ids() == {live}
    assert live.encode() not in again.path.read_bytes()  # encrypted
