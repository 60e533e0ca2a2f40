"""study: run crowdsourced human-AI writing studies and publish their datasets."""

__version__ = "0.1.0"
