"""Evaluation: datasets, the papers' metrics and raters, the runner, and the report."""
