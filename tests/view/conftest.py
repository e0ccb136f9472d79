"""The viewer tests share one viewer per session (``support.view_data``)."""

from support.view_data import view_data, viewer  # noqa: F401  # session fixtures
