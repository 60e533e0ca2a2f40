"""The survey engine: definitions (study.toml, presets, files), answer checking, and the
surveys due at each point of the participant's path."""
