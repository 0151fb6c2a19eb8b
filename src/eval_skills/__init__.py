"""eval-skills: evaluate AI agent skills (tool skills and instruction skills).

The public API is re-exported here lazily so that importing the package stays cheap.
"""

from __future__ import annotations

from ._version import __version__

__all__ = ["__version__"]
