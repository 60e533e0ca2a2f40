"""The survey engine: definitions (study.toml, presets, files) and their checks, the typed
surveys and questions they become, answer checking, and the surveys due at each point of the
participant's path."""
