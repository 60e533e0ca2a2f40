"""Simulation harnesses: model runs without people (MindCopilot §5.2)."""
