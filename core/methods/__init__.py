"""The question-answering methods: ReadAgent, MemWalker, Segment+ and the baselines.

``registry.py`` lists them; ``ask.py`` runs one and stores the run.
"""
