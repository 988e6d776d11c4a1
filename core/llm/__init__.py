"""The model seam (``seam.py``), the OpenAI-compatible backend, and the simulated server."""
