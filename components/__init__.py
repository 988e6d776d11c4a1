"""Drawing functions (``render_*``) that take data from ``core`` and put it on screen."""
