"""Anonymized, versioned dataset releases (`study keys`, `study release`, `study withdraw`).

One concept per module: `keys` (secret key material and the encrypted files beside it),
`pseudonyms`, `withdraw`, `pii` (the Presidio detector), `redaction` (replayable redaction of
session logs), `source`, `tables`, `facts`, `card`, `datapackage`, `changelog`, `checksums`,
`archive`, `leakscan`, `verify`, `diff`, `versioning`, `layout` (what a release folder holds),
`build` (the whole pipeline) and `cli`.
"""
