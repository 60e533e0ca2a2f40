"""A database URL a printed command takes (`study copy-database --to`, pg_dump's): no password
in it, neither in the address nor among the query's parameters, and none masked as `***`
either, which the command would send as the password."""

from __future__ import annotations

from study.store.engine import without_password


def test_a_command_s_url_leaves_every_password_out_and_masks_none():
    url = "postgresql+psycopg://study:s3cret@db.example.org:5432/main?password=other&sslmode=require"
    assert without_password(url) == "postgresql://study@db.example.org:5432/main?sslmode=require"
